"""AUR package files: URL normalization, .SRCINFO parsing and the PKGBUILD prologue scanner."""
