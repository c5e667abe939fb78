"""What the Python shim costs on model code: a small transformer's training step, shim on vs off.

The model and its loop are written the way CUDA code is (``device = "cuda" if
torch.cuda.is_available() else "cpu"``, ``model.to(device)``, batches made with
``device=device``, positions with ``torch.arange(..., device=x.device)``, ``loss.item()`` and
``torch.cuda.synchronize()`` each step). Two child processes run the same loop: one with the shim
active (``ACTIVATE_TORCH_DEVICE=1``, the shim on PYTHONPATH, as the runner starts test files: its
"cuda" lands on the CPU) and one without (plain CPU). Both build the same model from the same seed.

After a warm-up, the parent tells the children in turn (alternating which goes first) to run a
block of ``--steps`` steps and collects each block's CPU time (process CPU time with one intra-op
thread: waiting for a core on a busy machine is not counted). The extra cost is the median of the
per-round ratios on/off - 1, printed in percent with each side's median per step, and beside it
the ratio of each side's best block. On a VM a block's CPU time varies by some 10 % from one round
to the next, so both are needed: the median with enough rounds, the best blocks as a check.
Issue 17's target: at most 2 %. Exits 1 when both exceed ``--max-extra-pct`` (2.0), 2 when torch
is missing or an accelerator is present.

    DEVSHIM_SHIM_DIR=shim/python python bench/shim_model_bench.py [--rounds 41] [--steps 4]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHIM_DIR = pathlib.Path(os.environ.get("DEVSHIM_SHIM_DIR", REPO_ROOT / "shim" / "python"))
SHIM_VARIABLES = ("ACTIVATE_TORCH_DEVICE", "PYTORCH_ENABLE_MPS_FALLBACK", "TORCHDEVICE_RECORD",
                  "TORCHDEVICE_LOG_LEVEL", "TORCH_ALLOW_REDIRECTS", "TORCHDEVICE_POLICY")


def child(block_steps: int) -> int:
    """Builds the model, warms up (three blocks), then runs N steps per line "N" read from stdin."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    vocab, width, heads, layers, context, batch = 512, 128, 4, 4, 64, 8

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width, bias=False)
            self.out = nn.Linear(width, width, bias=False)
            self.norm2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x, cos, sin):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, heads, -1).transpose(1, 3).unbind(2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(y.transpose(1, 2).reshape(b, t, width))
            return x + self.mlp(self.norm2(x))

    def rotate(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.register_buffer("inv_freq", 1.0 / 10000 ** (
                torch.arange(0, width // heads, 2, dtype=torch.float32) / (width // heads)))

        def forward(self, tokens):
            t = tokens.shape[1]
            positions = torch.arange(t, device=tokens.device, dtype=torch.float32)
            angles = torch.outer(positions, self.inv_freq)
            cos, sin = angles.cos(), angles.sin()
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x, cos, sin)
            return self.head(self.norm(x))

    model = GPT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    generator = torch.Generator().manual_seed(1)

    def step():
        tokens = torch.randint(0, vocab, (batch, context + 1), generator=generator).to(device)
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        return loss.item()

    for _ in range(3 * block_steps):
        step()
    shim = "devshim" in sys.modules and os.environ.get("ACTIVATE_TORCH_DEVICE") == "1"
    param = next(model.parameters())
    print(f"ready {device} {param.device} {'shim' if shim else 'plain'}", flush=True)
    for line in sys.stdin:
        steps = int(line)
        start = time.process_time_ns()
        for _ in range(steps):
            step()
        print(time.process_time_ns() - start, flush=True)
    return 0


def start_child(shim: bool, steps: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in SHIM_VARIABLES and k != "PYTHONPATH"}
    if shim:
        env.update(ACTIVATE_TORCH_DEVICE="1", PYTORCH_ENABLE_MPS_FALLBACK="1",
                   PYTHONPATH=str(SHIM_DIR))
    return subprocess.Popen([sys.executable, __file__, "--child", "--steps", str(steps)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41, help="alternating rounds")
    parser.add_argument("--steps", type=int, default=4, help="training steps per block")
    parser.add_argument("--max-extra-pct", type=float, default=2.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.steps)
    try:
        import torch
    except ImportError:
        print("shim_model_bench: torch is not importable", file=sys.stderr)
        return 2
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        print("shim_model_bench: an accelerator is present; this compares the CPU with itself "
              "only on a CPU-only machine", file=sys.stderr)
        return 2

    sides = {"off": start_child(False, args.steps), "on": start_child(True, args.steps)}
    try:
        for name, proc in sides.items():
            ready = proc.stdout.readline().split()
            expected = ["ready", "cuda", "cpu", "shim"] if name == "on" else \
                ["ready", "cpu", "cpu", "plain"]
            if ready != expected:
                print(f"shim_model_bench: the shim-{name} child said {ready}, expected "
                      f"{expected}", file=sys.stderr)
                return 1

        def block(name):
            proc = sides[name]
            proc.stdin.write(f"{args.steps}\n")
            proc.stdin.flush()
            return int(proc.stdout.readline()) / args.steps / 1e6  # ms per step

        off, on = [], []
        for i in range(args.rounds):
            order = ("off", "on") if i % 2 == 0 else ("on", "off")
            got = {name: block(name) for name in order}
            off.append(got["off"])
            on.append(got["on"])
    finally:
        for proc in sides.values():
            proc.stdin.close()
            proc.wait()

    extra = 100 * statistics.median(b / a - 1 for a, b in zip(off, on))
    extra_min = 100 * (min(on) / min(off) - 1)
    print(f"training step of a 4-layer transformer (width 128, context 64, batch 8), one thread, "
          f"torch {torch.__version__}; {args.rounds} rounds of {args.steps} steps, alternating")
    print(f"shim off: {statistics.median(off):.2f} ms/step CPU (min {min(off):.2f}); "
          f"shim on (cuda -> cpu): {statistics.median(on):.2f} ms/step CPU (min {min(on):.2f})")
    print(f"extra: {extra:+.2f} % (median of per-round ratios), {extra_min:+.2f} % (ratio of the "
          f"best blocks); limit {args.max_extra_pct:.1f} %")
    if extra > args.max_extra_pct and extra_min > args.max_extra_pct:
        print(f"FAIL: the shim makes a training step {extra:.2f} % slower")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
