"""A module with two registries of its own and nothing in the default registry."""

from __future__ import annotations

from openprogram import Registry, function

FILES = Registry()
MAIL = Registry()


@function(registry=FILES)
def list_files(folder: str) -> list[str]:
    """List a folder.

    Args:
        folder: The folder.
    """
    return [folder]


@function(registry=MAIL)
def send_mail(to: str) -> str:
    """Send a mail.

    Args:
        to: The address.
    """
    return to
