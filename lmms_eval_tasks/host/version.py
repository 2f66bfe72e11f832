"""Which lmms-eval is installed, supported and tested; ``host_version()`` is the seam tests replace."""

from __future__ import annotations

# The lmms-eval versions the pack supports; must equal the bound in pyproject.toml (a test checks).
SUPPORTED_HOST_VERSIONS = ">=0.7.3,<0.8"
# The releases every host patch (host/patches.py) was tested on. The version gates no patch (each is gated
# by its probe); on another version the pack says which patches did not apply.
TESTED_HOST_VERSIONS: tuple[str, ...] = ("0.7.3",)
TESTED_HOST_TEXT = "tested on lmms-eval " + ", ".join(TESTED_HOST_VERSIONS)


def host_version() -> str | None:
    """The installed lmms-eval version, or None when it is not installed (tests monkeypatch this)."""
    from lmms_eval_tasks.reporting.schema import host_version as installed_version

    return installed_version()


def version_in(version: str | None, specifier: str) -> bool:
    """True when ``version`` satisfies the PEP 440 ``specifier`` (False for None or an unparsable version)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    if version is None:
        return False
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def host_tested() -> bool:
    """True when the installed lmms-eval is a release the host patches were tested on."""
    return any(version_in(host_version(), f"=={tested}") for tested in TESTED_HOST_VERSIONS)


def host_supported() -> bool:
    """True when the installed lmms-eval is within ``SUPPORTED_HOST_VERSIONS``."""
    return version_in(host_version(), SUPPORTED_HOST_VERSIONS)
