//! Names of this machine beyond `localhost`, for tests and benchmarks (through
//! `#[path]`) that reach one server under several names.
#![allow(dead_code)]

/// A name `/etc/hosts` gives 127.0.0.1 beside `localhost`, if the machine has
/// one (Debian's images name the machine there).
pub fn hosts_file_alias() -> Option<String> {
    let hosts = std::fs::read_to_string("/etc/hosts").ok()?;
    hosts.lines().find_map(|line| {
        let mut words = line.split('#').next()?.split_whitespace();
        (words.next()? == "127.0.0.1")
            .then(|| words.find(|name| !name.eq_ignore_ascii_case("localhost")))
            .flatten()
            .map(str::to_owned)
    })
}
