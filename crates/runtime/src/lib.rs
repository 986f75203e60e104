//! mobmem's ART-like managed runtime (issue 3): under construction.
