"""An exercise's `[cost]` table: the inputs its cost figures are measured on, and what is measured.

    [cost]
    inputs = [{ name = "x", shape = [8, 64] }, { name = "w", shape = [64] }]
    dtype = "float32"          # the floating inputs' dtype (an input may fix its own)
    device = "cpu"             # "cuda": also time per call on the GPU (needs_cuda exercises)
    mode = "default"           # "reduce-overhead": compiled with CUDA graphs, and CPU time per step measured

An exercise with a `[cost]` table gets a cost section in every report (judge/costs/section.py); the inputs are
made by the verifier (`make_inputs`, a fixed seed), never by the runner.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

COST_SEED = 20261201


class CostInput(BaseModel):
    """One argument of the entry point, in call order."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    shape: list[int] = Field(description="Its sizes, e.g. [8, 64].")
    dtype: str | None = Field(None, description="A fixed dtype ('int64', 'bfloat16'); none: cost.dtype.")
    low: float = Field(-1.0, description="Smallest value (integers: inclusive); floats are scaled normals.")
    high: float = Field(1.0, description="Largest value (integers: inclusive).")


class CostSpec(BaseModel):
    """The `[cost]` table of exercise.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    inputs: list[CostInput] = Field(min_length=1, description="The entry point's arguments, in order.")
    dtype: str = Field("float32", description="The dtype of inputs that do not fix their own.")
    device: Literal["cpu", "cuda"] = "cpu"
    mode: Literal["default", "reduce-overhead"] = Field("default", description="How the figures' compile is made.")

    def describe(self) -> str:
        """e.g. 'x: float32[8, 64], w: float32[64]'."""
        return ", ".join(f"{i.name}: {i.dtype or self.dtype}[{', '.join(map(str, i.shape))}]" for i in self.inputs)

    def make_inputs(self, device: str | None = None) -> list:
        """The inputs as tensors, the same on every call (a fixed seed): cost figures must not depend on chance."""
        import torch  # here: the exercise format is read where torch is not imported (the web front-end)

        g = torch.Generator().manual_seed(COST_SEED)
        made = []
        for spec in self.inputs:
            dtype = getattr(torch, spec.dtype or self.dtype)
            if dtype.is_floating_point:
                value = (torch.randn(spec.shape, generator=g, dtype=torch.float64) * max(abs(spec.low), abs(spec.high)))
            else:
                value = torch.randint(int(spec.low), int(spec.high) + 1, spec.shape, generator=g)
            made.append(value.to(dtype).to(device or self.device))
        return made


def spec_for(exercise, measure: bool | None = None) -> CostSpec | None:
    """The [cost] table a grading of `exercise` measures: its own; with `measure=True` (on demand) one made from its
    [contract] when it has no [cost] (each dim at its largest allowed size, the contract's first dtype); with
    `measure=False`, none."""
    if measure is False:
        return None
    if exercise.cost is not None or not measure or exercise.contract is None:
        return exercise.cost
    contract = exercise.contract
    sizes = {name: max(bounds) for name, bounds in contract.dims.items()}
    inputs = []
    for spec in contract.inputs:
        shape = [sizes[d] if isinstance(d, str) else d for d in spec.shape]
        low = spec.low if isinstance(spec.low, (int, float)) else 0
        high = spec.high if isinstance(spec.high, (int, float)) else (sizes.get(spec.high, 1) if spec.high else 1)
        fixed = spec.dtype if spec.dtype in ("int64", "int32", "bool") else None
        if fixed is None:
            low, high = max(low, -1.0), min(high, 1.0)
        inputs.append(CostInput(name=spec.name, shape=shape, dtype=fixed, low=low, high=high))
    return CostSpec(inputs=inputs, dtype=contract.dtypes[0],
                    device="cuda" if exercise.needs_cuda else "cpu")
