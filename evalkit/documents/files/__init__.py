"""Files and folders on disk, written so that nothing is lost or half-written: ``atomic`` (a file replaced in one
step), ``folder_swap`` (a results folder replaced as one set), ``private`` (owner-only files and folders),
``output_paths`` (where results go, refusing dangling symlinks), ``input_files`` (only regular files are read:
no FIFO, device or folder).

May import: ``evalkit.errors`` and the modules of this package only (no other part of ``evalkit.documents``).
"""
