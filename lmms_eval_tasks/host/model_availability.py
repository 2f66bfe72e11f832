"""Can this ``--model`` run here? From the host's model registry, for the launcher, the ``--model llava``
substitution and ``doctor``; a wrapper whose try-guarded model code did not import is unusable too."""

from __future__ import annotations

import ast
import builtins
import dis
import importlib
import importlib.util
import inspect
import types
from dataclasses import dataclass

from lmms_eval_tasks.host.argv import parse_model_args
from lmms_eval_tasks.host.llava_checkpoints import DEFAULT_ORIGINAL_LLAVA, ORIGINAL_TO_HF_CHECKPOINTS

ORIGINAL_LLAVA_HINT = (
    "install the original LLaVA code (python package `llava`, "
    "`pip install git+https://github.com/haotian-liu/LLaVA.git`); but no release of it can be installed "
    "next to this host: every release pins transformers<=4.37.2 (the last, 1.2.2.post1, pins "
    "transformers==4.37.2 and torch==2.1.2) while lmms-eval 0.7.3 requires transformers>=4.39.2 and this "
    "environment has transformers {transformers}; `pip install --no-deps` ignores those pins and is untested"
)


def _transformers_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transformers")
    except PackageNotFoundError:
        return "(not installed)"


# Models `doctor` checks by default (importing all ~120 host wrappers takes several seconds and floods the
# log with their import warnings; `doctor --all-models` checks every one).
DEFAULT_DOCTOR_MODELS: tuple[str, ...] = (
    "llava_hf",
    "llava",
    "random_guess",
    "llava_onevision",
    "qwen2_5_vl",
    "qwen2_vl",
    "internvl2",
    "idefics2",
    "instructblip",
    "openai",
)


@dataclass(frozen=True)
class WrapperStatus:
    """Whether one host model wrapper can run on this machine, and if not, why (one line)."""

    model: str
    ok: bool
    class_path: str = ""
    reason: str = ""
    missing: tuple[str, ...] = ()  # top-level modules the wrapper needs and cannot import


def host_model_names() -> list[str]:
    """Every canonical ``--model`` value of the host registry (built-ins and entry points, e.g. ours)."""
    from lmms_eval.models import MODEL_REGISTRY_V2

    return list(MODEL_REGISTRY_V2.list_canonical_model_ids())


def _guarded_imports(source: str) -> dict[str, str]:
    """Names bound by imports inside module-level ``try`` blocks -> the module each is imported from."""
    bound: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Try):
            continue
        for statement in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0:
                for alias in statement.names:
                    bound[alias.asname or alias.name] = statement.module
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name
    return bound


def _global_names(code: types.CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def unbound_guarded_names(cls: type) -> dict[str, str]:
    """{name: module it comes from} of the names the class's own methods use that its module tried to
    import in a ``try`` block and could not (the wrapper imports, then fails with ``NameError`` later)."""
    module = inspect.getmodule(cls)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return {}
    guarded = _guarded_imports(source)
    used: set[str] = set()
    for member in vars(cls).values():
        function = getattr(member, "__func__", member)
        function = getattr(function, "fget", function)
        code = getattr(function, "__code__", None)
        if code is not None:
            used |= _global_names(code)
    namespace = vars(module) if module is not None else {}
    return {
        name: guarded[name]
        for name in sorted(used)
        if name in guarded and name not in namespace and not hasattr(builtins, name)
    }


def error_line(error: BaseException) -> str:
    """``Type: first line of its message`` (the type alone for an empty message)."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def _import_error(module_name: str) -> str | None:
    """The one-line error importing ``module_name`` raises, or None when it imports."""
    try:
        importlib.import_module(module_name)
    except BaseException as error:  # noqa: BLE001 - any failure to import is the answer
        return error_line(error)
    return None


def wrapper_status(model: str, force_simple: bool = False) -> WrapperStatus:
    """Can ``--model <model>`` run here? Resolves it like the host, imports its class, and checks that the
    model code the class uses was importable (see ``unbound_guarded_names``)."""
    from lmms_eval.models import MODEL_REGISTRY_V2 as registry

    try:
        resolved = registry.resolve(model, force_simple=force_simple)
    except ValueError:
        reason = f"unknown model {model!r}: not in the host's model registry"
        return WrapperStatus(model, False, reason=reason)
    try:
        cls = registry.get_model_class(model, force_simple=force_simple)
    except BaseException as error:  # noqa: BLE001 - any failure to import is the answer
        missing = (error.name.split(".")[0],) if isinstance(error, ModuleNotFoundError) and error.name else ()
        return WrapperStatus(model, False, resolved.class_path, error_line(error), missing)
    unbound = unbound_guarded_names(cls)
    if not unbound:
        return WrapperStatus(model, True, resolved.class_path)
    # The try block stopped at its first failing import: report the modules that fail now, with the names
    # the wrapper's methods use that are therefore undefined.
    errors = {module: error for module in dict.fromkeys(unbound.values()) if (error := _import_error(module))}
    by_error: dict[str, list[str]] = {}
    for name, module_name in unbound.items():
        if module_name in errors:
            by_error.setdefault(errors[module_name], []).append(name)
    if not by_error:  # every module imports now (installed after the wrapper was imported)
        by_error = {"its try-guarded imports failed when the wrapper was imported": sorted(unbound)}
    reason = "imports, but its model code does not: " + "; ".join(
        f"{error} (undefined: {', '.join(names)})" for error, names in by_error.items()
    )
    missing = tuple(dict.fromkeys(module_name.split(".")[0] for module_name in errors))
    return WrapperStatus(model, False, resolved.class_path, reason, missing)


# Modules whose install needs more than `pip install <module>` on this setup.
MODULE_HINTS: dict[str, str] = {
    "torchvision": (
        "torchvision: the build that matches torch, from the same index as torch (PyPI's build fails to "
        "import next to a CPU torch wheel, so the pack's CPU setups leave it out)"
    ),
    "llava": "llava: the original LLaVA code, which cannot share this environment (see models.md)",
    "decord": "decord: `pip install 'lmms-eval-tasks[llava-hf]'` (or `pip install decord`)",
}


def install_hint(status: WrapperStatus) -> str:
    """How to make a wrapper importable, from the modules it misses (one line)."""
    if not status.missing:
        return "see the host's documentation of this model"
    return "install " + "; ".join(MODULE_HINTS.get(module, module) for module in status.missing)


def unavailable_model_message(status: WrapperStatus, model_args: str | None = None) -> str:
    """The launcher's message for a ``--model`` that cannot run here: what is missing and the ways out (one
    line with the closest names for a ``--model`` the registry does not know, usually a typo)."""
    if not status.class_path and status.reason.startswith("unknown model"):
        import difflib

        close = difflib.get_close_matches(status.model, host_model_names(), n=3, cutoff=0.6)
        guess = f" (did you mean {' or '.join(close)}?)" if close else ""
        return (
            f"lmms_eval: unknown model {status.model!r}{guess}: not in the host's model registry (nor among "
            "the pack's models); `lmms-eval-tasks doctor --all-models` lists the --model values that run here"
        )
    needs = f" needs the module(s) {', '.join(status.missing)}" if status.missing else ""
    from lmms_eval_tasks.documentation import doc

    lines = [
        f"lmms_eval: --model {status.model} cannot run on this machine: the host's wrapper "
        f"({status.class_path or 'not found'}){needs}, which cannot be imported.",
        f"  why: {status.reason}",
    ]
    if status.model == "llava":
        original = parse_model_args(model_args).get("pretrained") or DEFAULT_ORIGINAL_LLAVA
        hf_name = ORIGINAL_TO_HF_CHECKPOINTS.get(original.rstrip("/"), "llava-hf/llava-1.5-7b-hf")
        lines += [
            "  way out 1 (recommended): use the HF-native wrapper with the converted checkpoint:",
            f"    --model llava_hf --model_args pretrained={hf_name},device_map=cuda:0",
            f"    (original -> HF checkpoint names: {doc('models.md')})",
            f"  way out 2: {ORIGINAL_LLAVA_HINT.format(transformers=_transformers_version())}.",
            "  way out 3: unset LMMS_EVAL_TASKS_NO_SUBSTITUTION: the launcher then serves --model llava with "
            f"the pack's LLaVA on transformers ({doc('models.md')})",
        ]
    else:
        lines += [
            f"  way out 1: {install_hint(status)}.",
            "  way out 2: pick a --model that runs here: `lmms-eval-tasks doctor --all-models` lists them.",
        ]
    lines.append("  (set LMMS_EVAL_TASKS_SKIP_MODEL_CHECK=1 to skip this check)")
    return "\n".join(lines)


VISION_FIX = (
    "pip uninstall -y torchvision timm (transformers works without them), or install the torchvision "
    "made for your torch from the index torch came from (README, 'Using the pack')"
)


def vision_problem() -> str | None:
    """One line when torchvision (else timm, which imports it) is installed but does not import: PyPI's
    torchvision next to a CPU torch breaks every transformers import, which needs neither; else None."""
    for name in ("torchvision", "timm"):
        if importlib.util.find_spec(name) is not None:
            broken = _import_error(name)
            return (
                f"{name} is installed but does not import ({broken}); fix: {VISION_FIX}" if broken else None
            )
    return None
