//! Workers: claim runs with a lease, run the suite, store findings as they come.
