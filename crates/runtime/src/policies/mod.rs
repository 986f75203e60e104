//! Policies built on the runtime's hooks (a module each, plus an entry in
//! [`crate::hooks::POLICIES`]).

pub mod segregate;
