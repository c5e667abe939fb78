"""devshim/libraries.py: Lightning's CUDAAccelerator takes the device the default policy builds.

Under ``TORCHDEVICE_DEVICE_OBJECTS=redirect`` (the default) ``torch.device("cuda", 0)`` is the CPU's
device object, and Lightning (requirements-dev.txt) refused it in ``CUDAAccelerator.setup_device``:
every ``Trainer(accelerator="gpu")`` and ``Fabric(accelerator="cuda")`` raised
``MisconfigurationException: Device should be GPU, got cpu instead`` before it placed anything.
"""
import textwrap

import lightning.fabric.accelerators.cuda  # noqa: F401 - imported before any test activates the shim
import lightning.pytorch.accelerators.cuda  # noqa: F401
import pytest
import torch

from conftest import cpu_only, recorded_apis, run_shimmed
from devshim import libraries

pytestmark = pytest.mark.skipif(not cpu_only(torch), reason="the masquerade is for machines "
                                "without CUDA or MPS")


def _fit_quietly(trainer_kwargs):
    import lightning.pytorch as pl
    from lightning.pytorch.demos.boring_classes import BoringModel

    trainer = pl.Trainer(max_epochs=1, limit_train_batches=2, limit_val_batches=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, **trainer_kwargs)
    model = BoringModel()
    trainer.fit(model)
    return trainer, model


def test_a_trainer_on_the_gpu_fits_in_a_fresh_process_under_the_default_policy():
    # Lightning imported after the shim was activated (sitecustomize): patched on its import.
    script = textwrap.dedent("""
        import torch
        import lightning.pytorch as pl
        from lightning.pytorch.accelerators import CUDAAccelerator
        from lightning.pytorch.demos.boring_classes import BoringModel
        trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=1, limit_train_batches=2,
                             limit_val_batches=1, logger=False, enable_checkpointing=False,
                             enable_progress_bar=False, enable_model_summary=False,
                             precision="bf16-mixed")
        model = BoringModel()
        trainer.fit(model)
        assert isinstance(trainer.accelerator, CUDAAccelerator), trainer.accelerator
        assert trainer.strategy.root_device == torch.device("cuda", 0)
        assert next(model.parameters()).device == torch.device("cuda", 0)
        print("fitted", trainer.global_step, next(model.parameters()).device)
    """)
    done = run_shimmed(script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fitted 2 cpu" in done.stdout, done.stdout


def test_a_trainer_on_the_gpu_fits_when_lightning_was_imported_before_the_shim(shim):
    from lightning.pytorch.accelerators import CUDAAccelerator

    assert hasattr(CUDAAccelerator.setup_device, "__wrapped__")  # patched at once
    trainer, model = _fit_quietly({"accelerator": "gpu", "devices": 1})
    assert trainer.global_step == 2
    assert trainer.strategy.root_device == torch.device("cuda")
    assert libraries.LIGHTNING_API in recorded_apis()


def test_fabric_on_cuda_sets_up_a_model_and_steps(shim):
    from lightning.fabric import Fabric

    fabric = Fabric(accelerator="cuda", devices=1)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    before = next(model.parameters()).detach().clone()
    fabric.backward(model(torch.randn(3, 4, device=fabric.device)).sum())
    optimizer.step()
    assert not torch.equal(before, next(model.parameters()))
    assert fabric.device == torch.device("cuda", 0)


def test_a_device_of_another_type_than_the_one_used_is_still_refused(shim):
    from lightning.fabric.utilities.exceptions import MisconfigurationException
    from lightning.pytorch.accelerators import CUDAAccelerator

    with pytest.raises(MisconfigurationException, match="Device should be GPU, got meta"):
        CUDAAccelerator().setup_device(torch.device("meta"))


def test_a_ddp_spawn_trainer_on_the_gpu_fits_under_the_default_policy():
    # The strategy is pickled into the spawned process: its root device comes back there as a
    # new device(type='cpu'), not the object the policy built (Lightning's
    # test_error_handling_all_stages[ddp_spawn] failed so).
    script = textwrap.dedent("""
        import lightning.pytorch as pl
        from lightning.pytorch.demos.boring_classes import BoringModel
        if __name__ == "__main__":
            trainer = pl.Trainer(accelerator="gpu", devices=1, strategy="ddp_spawn",
                                 fast_dev_run=True, logger=False, enable_progress_bar=False,
                                 enable_model_summary=False)
            trainer.fit(BoringModel())
            print("fitted", trainer.state.status)
    """)
    done = run_shimmed(script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fitted TrainerStatus.FINISHED" in done.stdout, done.stdout


def test_under_keep_lightnings_own_check_is_left_as_written(shim_keeping_objects):
    from lightning.pytorch.accelerators import CUDAAccelerator

    assert not hasattr(CUDAAccelerator.setup_device, "__wrapped__")
    trainer, _ = _fit_quietly({"accelerator": "gpu", "devices": 1})  # a "cuda" object: it passes
    assert trainer.strategy.root_device == torch.device("cuda", 0)
    assert trainer.strategy.root_device.type == "cuda"


def test_deactivation_gives_lightning_its_method_back(shim):
    import lightning.fabric.accelerators.cuda as fabric_cuda
    import lightning.pytorch.accelerators.cuda as pytorch_cuda

    patched = [(m.CUDAAccelerator, m.CUDAAccelerator.setup_device)
               for m in (pytorch_cuda, fabric_cuda)]
    assert all(hasattr(method, "__wrapped__") for _, method in patched)
    shim.deactivate()
    for cls, method in patched:
        assert cls.setup_device is method.__wrapped__
