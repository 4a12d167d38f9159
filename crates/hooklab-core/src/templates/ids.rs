//! Ids in each provider's own shape (`pi_3Q…`, `txn_01h…`, `pay_…`, numeric Mercado Pago ids,
//! UUIDs), derived from a seed so that one call's ids are unique (the seed holds the time and a
//! salt) yet reproducible in tests. Each id has a label: the same label gives the same id within
//! one event, so a charge and its PaymentIntent can name each other.

use sha2::Digest as _;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const LOWER: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Paddle's ids are lower-case ULIDs (Crockford's base32: no i, l, o, u).
const CROCKFORD: &[u8] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Makes the ids of one test event.
#[derive(Debug, Clone)]
pub(super) struct Ids {
    seed: String,
}

impl Ids {
    pub(super) fn new(seed: String) -> Self {
        Self { seed }
    }

    /// At least `len` pseudo-random bytes for `label`.
    fn bytes(&self, label: &str, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 32);
        let mut round = 0u32;
        while out.len() < len {
            let digest = sha2::Sha256::digest(format!("{}|{label}|{round}", self.seed));
            out.extend_from_slice(&digest);
            round += 1;
        }
        out.truncate(len);
        out
    }

    fn chars_of(&self, label: &str, len: usize, alphabet: &[u8]) -> String {
        self.bytes(label, len)
            .into_iter()
            .map(|b| char::from(alphabet[usize::from(b) % alphabet.len()]))
            .collect()
    }

    /// Letters (both cases) and digits, as in Stripe's ids.
    pub(super) fn alnum(&self, label: &str, len: usize) -> String {
        self.chars_of(label, len, BASE62)
    }

    /// Lower-case letters and digits.
    pub(super) fn lower(&self, label: &str, len: usize) -> String {
        self.chars_of(label, len, LOWER)
    }

    /// Upper-case letters and digits.
    pub(super) fn upper(&self, label: &str, len: usize) -> String {
        self.chars_of(label, len, UPPER)
    }

    /// Lower-case hex.
    pub(super) fn hex(&self, label: &str, len: usize) -> String {
        let mut text = hex::encode(self.bytes(label, len.div_ceil(2)));
        text.truncate(len);
        text
    }

    /// A number of exactly `digits` decimal digits (at most 18), never starting with 0.
    pub(super) fn number(&self, label: &str, digits: u32) -> u64 {
        let digits = digits.clamp(1, 18);
        let low = 10u64.pow(digits - 1);
        let span = 9 * low;
        let bytes = self.bytes(label, 8);
        let raw = u64::from_be_bytes(bytes.try_into().unwrap_or([0; 8]));
        low + raw % span
    }

    /// A ULID-like tail as Paddle prints it: `01` then 24 lower-case base32 characters.
    pub(super) fn ulid(&self, label: &str) -> String {
        format!("01{}", self.chars_of(label, 24, CROCKFORD))
    }

    /// A version-4-shaped UUID.
    pub(super) fn uuid(&self, label: &str) -> String {
        let h = self.hex(label, 32);
        format!(
            "{}-{}-4{}-8{}-{}",
            &h[..8],
            &h[8..12],
            &h[13..16],
            &h[17..20],
            &h[20..32]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_determinism() {
        let ids = Ids::new("1700000000000:a".into());
        assert_eq!(
            ids.alnum("pi", 24),
            ids.alnum("pi", 24),
            "a label is stable"
        );
        assert_ne!(ids.alnum("pi", 24), ids.alnum("ch", 24), "labels differ");
        assert_ne!(
            ids.alnum("pi", 24),
            Ids::new("1700000000000:b".into()).alnum("pi", 24),
            "seeds differ"
        );
        assert_eq!(ids.alnum("x", 40).len(), 40, "longer than one digest");
        assert_eq!(ids.hex("x", 7).len(), 7);
        let n = ids.number("mp", 11);
        assert!((10_000_000_000..100_000_000_000).contains(&n), "{n}");
        let uuid = ids.uuid("u");
        assert_eq!(uuid.len(), 36);
        assert_eq!(&uuid[14..15], "4");
        let ulid = ids.ulid("txn");
        assert!(ulid.starts_with("01") && ulid.len() == 26, "{ulid}");
        assert!(!ulid.contains(['i', 'l', 'o', 'u']), "{ulid}");
        assert!(ids.lower("p", 30).chars().all(|c| !c.is_ascii_uppercase()));
        assert!(ids.upper("p", 30).chars().all(|c| !c.is_ascii_lowercase()));
    }
}
