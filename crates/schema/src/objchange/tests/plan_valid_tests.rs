//! AssertPlanValid cases (filled below).
