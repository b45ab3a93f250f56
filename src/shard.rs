//! `--shard K/N`: one of N deterministic slices of the work, so a CI matrix of N jobs runs
//! everything exactly once. Whole suites (projects, imports) are assigned by suite id; suites of
//! independent items (benchmark tasks, dataset cases) run in every shard with the items
//! assigned by `suite id/item id`. `fcorr merge` joins the parts back into one suite.

use std::fmt;
use std::str::FromStr;

/// Shard K of N (1-based, as people and matrices count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub total: u32,
}

/// A `--shard` value that is not `K/N` with 1 ≤ K ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard `{0}`: expected K/N with 1 <= K <= N, e.g. 2/4")]
pub struct ShardError(pub String);

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError(text.to_string());
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let total: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || total == 0 || index > total {
            return Err(bad());
        }
        Ok(Shard { index, total })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

impl Shard {
    /// True when the item with this id belongs to this shard. The hash (FNV-1a, 64-bit) is fixed
    /// here, not taken from the standard library, so every machine and fcorr version agrees.
    pub fn keeps(&self, id: &str) -> bool {
        let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
        hash % self.total as u64 == (self.index - 1) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_rejects_the_rest() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard { index: 2, total: 4 });
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_id_lands_in_exactly_one_shard_and_shards_are_balanced() {
        let ids: Vec<String> = (0..1000).map(|i| format!("suite/case-{i}")).collect();
        let shards: Vec<Shard> = (1..=4).map(|k| Shard { index: k, total: 4 }).collect();
        let mut sizes = [0; 4];
        for id in &ids {
            let owners: Vec<usize> = (0..4).filter(|&i| shards[i].keeps(id)).collect();
            assert_eq!(owners.len(), 1, "{id}");
            sizes[owners[0]] += 1;
        }
        assert!(sizes.iter().all(|&n| (200..=300).contains(&n)), "{sizes:?}");
        // Deterministic: the same id, the same shard, on every machine (a fixed value).
        assert!(Shard { index: 1, total: 1 }.keeps("anything"));
        let fixed: Vec<bool> = shards.iter().map(|s| s.keeps("calc-bench/fix-add")).collect();
        assert_eq!(fixed.iter().filter(|&&k| k).count(), 1);
    }
}
