"""The pinned revisions: one folder per revision under ``schema/``, each a pin + overlay.

``schema/<revision>/pin.toml`` says which schema.json (and its sha256);
``schema/<revision>/overlay.toml`` says what the schema does not, including the
package it compiles into. A spec bump adds or edits one such folder and nothing else
in the generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.overlay import Overlay, OverlayError, load_overlay
from generator.source import ROOT, Pin, load_pin

SCHEMA_ROOT = ROOT / "schema"


@dataclass(frozen=True, slots=True)
class Revision:
    folder: Path
    pin: Pin
    overlay: Overlay

    @property
    def package(self) -> str:
        return self.overlay.package


def check_pairing(pin: Pin, overlay: Overlay) -> None:
    """The overlay must describe the revision the pin names, and speak it. An extension's
    pin names the extension; its overlay speaks the core revision it extends. A document
    schema speaks no protocol version."""
    if overlay.document is not None:
        return
    revision = overlay.extension.base if overlay.extension is not None else pin.revision
    if overlay.latest_version != revision:
        raise OverlayError(
            f"overlay latest_version {overlay.latest_version!r} does not match the pinned "
            f"revision {revision!r}: update [protocol] in the overlay with the pin"
        )
    if revision not in overlay.supported_versions:
        raise OverlayError(
            f"overlay supported_versions {list(overlay.supported_versions)} "
            f"leave out the pinned revision {revision!r}"
        )


def load_revision(folder: Path) -> Revision:
    pin = load_pin(folder / "pin.toml")
    overlay = load_overlay(folder / "overlay.toml")
    check_pairing(pin, overlay)
    return Revision(folder=folder, pin=pin, overlay=overlay)


def revisions(root: Path = SCHEMA_ROOT) -> tuple[Revision, ...]:
    """Every pinned revision, newest first; package names must be distinct. A revision
    ``add-revision`` left questions in (``[draft] asked``) is pending: not one of them
    until they are answered."""
    loaded = (load_revision(pin.parent) for pin in sorted(root.glob("*/pin.toml"), reverse=True))
    found = tuple(revision for revision in loaded if not revision.overlay.asked)
    packages = [r.package for r in found]
    if len(set(packages)) != len(packages):
        raise OverlayError(f"two revisions compile into the same package: {packages}")
    return found
