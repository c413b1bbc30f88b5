//! Counted slots per client address, with an optional total: what caps the
//! connections a client may hold open and the progress streams it may follow.
//! A slot is held as long as its [`Slot`] lives; dropping it gives it back.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// Slots shared by every client, at most `per_client` for one address and
/// `total` for all of them together.
#[derive(Clone, Debug)]
pub struct ClientSlots(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    per_client: usize,
    total: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// Why a slot was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The address holds its `per_client` slots already.
    Client,
    /// Every client together holds `total`.
    Total,
}

impl ClientSlots {
    pub fn new(per_client: usize, total: usize) -> Self {
        Self(Arc::new(Shared {
            per_client: per_client.max(1),
            total: total.max(1),
            held: Mutex::new(Held::default()),
        }))
    }

    /// Slots limited per client only.
    pub fn per_client(per_client: usize) -> Self {
        Self::new(per_client, usize::MAX)
    }

    pub fn per_client_limit(&self) -> usize {
        self.0.per_client
    }

    pub fn total_limit(&self) -> usize {
        self.0.total
    }

    /// Takes a slot for `addr`, or says which limit refused it.
    pub fn take(&self, addr: IpAddr) -> Result<Slot, Refused> {
        self.grant(addr, true)
    }

    /// [`ClientSlots::take`] past the total, for the newcomer that takes the
    /// place of a connection being closed (its slot comes back as it ends).
    /// The client's own limit still holds.
    pub fn take_beyond_total(&self, addr: IpAddr) -> Result<Slot, Refused> {
        self.grant(addr, false)
    }

    fn grant(&self, addr: IpAddr, within_total: bool) -> Result<Slot, Refused> {
        let client = super::ratelimit::client_key(addr);
        let mut held = self.0.held.lock().unwrap_or_else(PoisonError::into_inner);
        if within_total && held.total >= self.0.total {
            return Err(Refused::Total);
        }
        let mine = held.by_client.entry(client).or_insert(0);
        if *mine >= self.0.per_client {
            return Err(Refused::Client);
        }
        *mine += 1;
        held.total += 1;
        Ok(Slot {
            slots: self.0.clone(),
            client,
        })
    }

    /// Slots held now, by everyone.
    pub fn held(&self) -> usize {
        self.0
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }
}

/// One held slot; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<Shared>,
    client: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self
            .slots
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.total = held.total.saturating_sub(1);
        // An address that holds nothing leaves the map, so it never grows past
        // the clients connected at once.
        if let Some(n) = held.by_client.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn a_client_gets_its_share_and_others_still_get_in() {
        let slots = ClientSlots::new(2, 3);
        let a = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
        let b = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
        let first = slots.take(a).expect("first");
        let _second = slots.take(a).expect("second");
        assert_eq!(slots.take(a).err(), Some(Refused::Client));
        let _other = slots.take(b).expect("another address");
        assert_eq!(slots.take(b).err(), Some(Refused::Total));
        drop(first);
        assert_eq!(slots.held(), 2);
        slots.take(a).expect("a slot given back is free again");
    }

    #[test]
    fn one_ipv6_host_is_one_client() {
        let slots = ClientSlots::per_client(1);
        let one: IpAddr = "2001:db8::1".parse().expect("addr");
        let same_64: IpAddr = "2001:db8::2".parse().expect("addr");
        let other_64 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 1, 0, 0, 0, 1));
        let _held = slots.take(one).expect("first");
        assert_eq!(slots.take(same_64).err(), Some(Refused::Client));
        slots.take(other_64).expect("another /64");
    }
}
