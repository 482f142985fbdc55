//! AssertObjectCompatible cases (filled below).
