"""Who the on-disk compile cache trusts (:mod:`numba_tile.runtime.disk_cache`): only what
the current user wrote.

A cache entry holds a cubin that ``ct.launch`` runs, and anyone with the same installation can
compute an entry's key, so an entry's name proves nothing. The cache therefore

* uses a directory only if it is owned by the current user and writable by nobody else (it
  is created ``0700``); otherwise it warns once and compiles without the cache;
* authenticates every entry with HMAC-SHA256 under a per-user secret key, 32 random bytes
  kept in ``.key`` in that directory (created ``0600``; a key file that is not a regular
  file of the current user, readable by no one else, makes the directory untrusted);
* opens entries without following symbolic links, as regular files of the current user that
  nobody else can write and of at most :data:`MAX_ENTRY_BYTES`: a FIFO, a device or a link in
  place of an entry is a miss, never a hang or a huge read.

On systems without POSIX ownership (Windows) the ownership and mode checks are skipped; the
HMAC still applies.

>>> import tempfile
>>> from numba_tile.runtime import cache_trust
>>> with tempfile.TemporaryDirectory() as directory:
...     key = cache_trust.secret_key(directory)
...     len(key), key == cache_trust.secret_key(directory)
(32, True)
"""

import hashlib
import hmac
import os
import secrets
import stat

#: The largest entry the cache reads (a cubin of a large kernel is a few MiB).
MAX_ENTRY_BYTES = 256 * 2 ** 20
KEY_NAME = ".key"
_KEY_BYTES = 32
_POSIX = hasattr(os, "getuid")


class UntrustedCache(Exception):
    """The cache directory (or its key) is not the current user's alone."""


def _owned_and_private(status, readable_by_others=True):
    """The file of ``status`` is the current user's and nobody else can write it (or, with
    ``readable_by_others=False``, read it either)."""
    if not _POSIX:
        return True
    others = 0o022 if readable_by_others else 0o077
    return status.st_uid == os.getuid() and not status.st_mode & others


def trusted_directory(directory):
    """Create ``directory`` (``0700``) if missing; raise :class:`UntrustedCache` unless it is
    a directory (not a link to one) of the current user that nobody else can write."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        status = os.lstat(directory)
    except OSError as error:
        raise UntrustedCache(f"cannot use it ({error})") from None
    if not stat.S_ISDIR(status.st_mode):
        raise UntrustedCache("it is not a directory (a symbolic link?)")
    if not _owned_and_private(status):
        raise UntrustedCache("it is not owned by the current user, or others can write to it")


def secret_key(directory):
    """The per-user secret key of the cache in ``directory``, made on first use."""
    path = os.path.join(directory, KEY_NAME)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except FileExistsError:
        descriptor = None
    except OSError as error:
        raise UntrustedCache(f"cannot make its key file ({error})") from None
    if descriptor is not None:
        with os.fdopen(descriptor, "wb") as file:
            file.write(secrets.token_bytes(_KEY_BYTES))
    key = read_private_file(path, _KEY_BYTES, readable_by_others=False)
    if key is None or len(key) != _KEY_BYTES:
        raise UntrustedCache(f"its key file {path} is not a private file of the current user "
                             f"holding {_KEY_BYTES} bytes; delete it")
    return key


def read_private_file(path, limit, readable_by_others=True):
    """The bytes of ``path`` if it is a regular file (not a link) of the current user that
    nobody else can write, of at most ``limit`` bytes; else None. Never blocks on a FIFO.

    >>> import os, tempfile
    >>> from numba_tile.runtime.cache_trust import read_private_file
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "entry")
    ...     with open(path, "wb") as file:
    ...         _ = file.write(b"cubin")
    ...     os.chmod(path, 0o600)
    ...     read_private_file(path, 16), read_private_file(path, 4)
    (b'cubin', None)
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not (stat.S_ISREG(status.st_mode) and status.st_size <= limit and
                _owned_and_private(status, readable_by_others)):
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(descriptor, min(2 ** 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return b"".join(chunks) if size <= limit else None


def signature(key, payload):
    """The HMAC-SHA256 of ``payload`` under ``key``.

    >>> from numba_tile.runtime.cache_trust import authentic, signature
    >>> mac = signature(b"k" * 32, b"entry")
    >>> authentic(b"k" * 32, b"entry", mac), authentic(b"x" * 32, b"entry", mac)
    (True, False)
    """
    return hmac.new(key, payload, hashlib.sha256).digest()


def authentic(key, payload, mac):
    """``mac`` is :func:`signature` of ``payload`` under ``key`` (compared in constant
    time)."""
    return hmac.compare_digest(signature(key, payload), mac)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
