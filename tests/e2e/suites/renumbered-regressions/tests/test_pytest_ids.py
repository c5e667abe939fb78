"""pytest names a parameter value it does not print (a torch.device, a tuple) by its argument and
index in the parameter list (`device0`, `device1`, ...): under the masquerade each kind gains a
cuda device, and every case after it a new number, as tensordict's tests over
get_available_devices()."""

import pytest
import torch

DEVICES = [("cpu",)] + ([("cuda",)] if torch.cuda.is_available() else [])


# [ones-device0] and [zeros-device1] pass without the shim. With it, [ones-device0..1] and
# [zeros-device2..3]: the added cuda cases fail (a tensor placed "on cuda" is on the CPU), as many
# failures as cases added, so none must be a regression, and [zeros-device1] is not lost.
@pytest.mark.parametrize("kind,device", [(k, d) for k in ("ones", "zeros") for d in DEVICES])
def test_made_on(kind, device):
    assert getattr(torch, kind)(2, device=device[0]).device.type == device[0]
