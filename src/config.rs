//! Configuration, loaded from the environment in one place.
