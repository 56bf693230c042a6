//! SSD simulator
