"""Each private torch name the judge patches (judge.shared.torch_patches) still exists, in the form the patch expects,
and is still read where the patch relies on it: a new torch that renames or reworks one fails here, by name."""

import importlib
import inspect
import shutil

import pytest

from judge.shared import torch_patches
from judge.shared.torch_patches import TARGETS, Target


def _resolve(target: Target):
    value = importlib.import_module(target.module)
    for part in target.name.split("."):
        value = value.get(part) if isinstance(value, dict) else getattr(value, part)
    return value


def _params(fn) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


@pytest.mark.parametrize("target", TARGETS, ids=[f"{t.patch}:{t.module}.{t.name}" for t in TARGETS])
def test_the_patched_name_is_still_there_as_expected(target):
    try:
        value = _resolve(target)
    except (AttributeError, KeyError, ImportError):
        pytest.fail(f"torch has no {target.module}.{target.name} any more: judge.shared.torch_patches.{target.patch} "
                    "patches nothing; find what replaced it or remove the patch")
    if target.kind == "str":
        assert isinstance(value, str), f"{target.module}.{target.name} is a {type(value).__name__}, not a folder"
    elif target.kind == "config entry":
        from torch.utils._config_module import _ConfigEntry

        entry = _resolve(Target(target.patch, target.module, target.name.rpartition(".")[0], "entry"))
        field = target.name.rpartition(".")[2]
        assert isinstance(entry, _ConfigEntry) and field in _ConfigEntry.__dataclass_fields__, \
            f"{target.module}.{target.name} is no longer a field of torch's config entries"
    else:
        assert callable(value), f"{target.module}.{target.name} is not callable"
        if target.params:
            assert _params(value) == target.params, \
                f"{target.module}.{target.name} now takes {_params(value)}; {target.patch} wraps {target.params}"


@pytest.mark.parametrize("target", [t for t in TARGETS if t.read_in],
                         ids=[f"{t.patch}:{t.read_in}" for t in TARGETS if t.read_in])
def test_torch_still_reads_the_name_where_the_patch_replaces_it(target):
    """A patch replaces a module-level name: torch must look it up there when it runs, not keep a copy."""
    source = inspect.getsource(importlib.import_module(target.read_in))
    assert target.read_as in source, f"{target.read_in} no longer uses `{target.read_as}`: " \
        f"judge.shared.torch_patches.{target.patch} would change nothing"


def test_every_patch_declares_what_it_relies_on():
    patches = {name for name, fn in vars(torch_patches).items()
               if inspect.isfunction(fn) and fn.__module__ == torch_patches.__name__ and not name.startswith("_")}
    assert patches - {"header_dir"} == {t.patch for t in TARGETS}
    for name in patches:
        assert getattr(torch_patches, name).__doc__, f"judge.shared.torch_patches.{name} says what it does and why"


def test_the_guard_latency_probe_is_skipped(monkeypatch):
    import torch._dynamo.guards as guards

    monkeypatch.setattr(guards, "profile_guard_manager", guards.profile_guard_manager)
    torch_patches.skip_guard_latency_probe()
    assert guards.profile_guard_manager(None, None, 1) == 0.0


def test_known_isa_probe_libraries_load_without_a_process(monkeypatch, tmp_path):
    from torch._inductor import cpu_vec_isa

    calls = []
    monkeypatch.setattr(cpu_vec_isa.VecISA, "_probe_load", lambda self, path: calls.append(path) or False)
    torch_patches.trust_known_isa_loads(str(tmp_path), ["isa/avx2.so"])
    isa = cpu_vec_isa.VecISA()
    assert isa._probe_load(str(tmp_path / "isa" / "avx2.so")) is True and calls == []
    assert isa._probe_load(str(tmp_path / "other.so")) is False and calls == [str(tmp_path / "other.so")]


def test_a_fresh_cache_trusts_the_probe_libraries_copied_into_it_and_no_other(monkeypatch, tmp_path):
    """As the loader and the artifact exercises' build process set up their empty caches: only the libraries
    copied from the run's cache, where they were known to load, are trusted; one named but absent, or outside the
    cache, is neither copied nor trusted, and Inductor probes it as usual."""
    from torch._inductor import cpu_vec_isa

    from judge.shared.isa_probes import seed_isa_probes

    run, fresh = tmp_path / "run", tmp_path / "fresh"
    (run / "isa").mkdir(parents=True)
    (run / "isa" / "avx2.so").write_bytes(b"a probe library")
    (tmp_path / "escape.so").write_bytes(b"not the run's")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(run))
    monkeypatch.setenv("PRACTICE_VEC_ISA_LOADED", "isa/avx2.so,isa/avx512.so,../escape.so")
    seeded = seed_isa_probes(fresh)
    assert seeded == ["isa/avx2.so"] and (fresh / "isa" / "avx2.so").read_bytes() == b"a probe library"
    assert sorted(p.name for p in fresh.rglob("*.so")) == ["avx2.so"]
    calls = []
    monkeypatch.setattr(cpu_vec_isa.VecISA, "_probe_load", lambda self, path: calls.append(path) or False)
    torch_patches.trust_known_isa_loads(str(fresh), seeded)
    isa = cpu_vec_isa.VecISA()
    assert isa._probe_load(str(fresh / "isa" / "avx2.so")) is True and calls == []
    assert isa._probe_load(str(fresh / "isa" / "avx512.so")) is False and calls == [str(fresh / "isa" / "avx512.so")]


def test_nothing_to_trust_leaves_the_probe_as_it_is(monkeypatch):
    from torch._inductor import cpu_vec_isa

    probe = cpu_vec_isa.VecISA._probe_load
    monkeypatch.setattr(cpu_vec_isa.VecISA, "_probe_load", probe)
    torch_patches.trust_known_isa_loads("/nowhere", [])
    assert cpu_vec_isa.VecISA._probe_load is probe


def test_a_flag_forced_by_the_environment_follows_this_runs(monkeypatch):
    import torch._inductor.config as config

    entry = config._config["fx_graph_cache"]
    monkeypatch.setattr(entry, "env_value_force", True)
    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    # config.patch puts the value back; monkeypatch.setattr would delattr it (not in the module's __dict__),
    # which hides the entry from every later test in this process
    with config.patch(fx_graph_cache=config.fx_graph_cache):
        torch_patches.follow_env(config, "fx_graph_cache", "TORCHINDUCTOR_FX_GRAPH_CACHE")
        assert config.fx_graph_cache is False
    assert isinstance(config.fx_graph_cache, bool)  # still there for the next test


@pytest.mark.skipif(shutil.which("ld.gold") is None, reason="gold is not installed: kernels link with GNU ld")
def test_gcc_links_kernels_with_gold_once_and_other_compilers_as_before(monkeypatch):
    from torch._inductor import cpp_builder

    unpatched = cpp_builder._get_optimization_cflags
    monkeypatch.setattr(cpp_builder, "_get_optimization_cflags", unpatched)  # put back after the test
    torch_patches.link_kernels_with_gold()
    torch_patches.link_kernels_with_gold()  # a second call wraps nothing again
    cflags, ldflags = cpp_builder._get_optimization_cflags("g++")
    assert ldflags.count("fuse-ld=gold") == 1 and cflags == unpatched("g++")[0]
    assert cpp_builder._get_optimization_cflags("clang++") == unpatched("clang++")
    command = cpp_builder.CppBuilder("kernel", ["kernel.cpp"], cpp_builder.CppOptions()).get_command_line()
    assert "-fuse-ld=gold" in command.split()


def test_without_gold_kernels_link_as_before(monkeypatch):
    from torch._inductor import cpp_builder

    unpatched = cpp_builder._get_optimization_cflags
    monkeypatch.setattr(cpp_builder, "_get_optimization_cflags", unpatched)
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    torch_patches.link_kernels_with_gold()
    assert cpp_builder._get_optimization_cflags is unpatched
