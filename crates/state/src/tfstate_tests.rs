//! v4 tests (below).
