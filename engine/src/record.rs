//! A record as the log holds it: its offset, the leader epoch and base offset of its batch,
//! its value and producer fields. Plain data that the log, the producer state, the wire, the
//! trace's events and the snapshot all carry.

use serde::{Deserialize, Serialize};

/// RecordBatch.NO_PRODUCER_ID, NO_PRODUCER_EPOCH and NO_SEQUENCE.
pub const NO_PRODUCER_ID: i64 = -1;
pub const NO_PRODUCER_EPOCH: i16 = -1;
pub const NO_SEQUENCE: i32 = -1;

/// The values of `records` separated by spaces, as the console tools print them. A
/// `Display`, so a log line writes them in place (not a Vec of them collected and joined
/// at each line that lists values).
pub struct Values<'a>(pub &'a [Record]);

impl std::fmt::Display for Values<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(&r.value)?;
        }
        Ok(())
    }
}

/// One record: its offset, the leader epoch of its batch, and a short value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub offset: u64,
    /// The partitionLeaderEpoch of the batch that holds the record.
    pub epoch: i32,
    /// The base offset of the batch that holds the record (batches are kept as the leader
    /// wrote them: a follower appends them byte for byte).
    pub batch_base: u64,
    pub value: String,
    /// The batch's producerId and producerEpoch, and this record's sequence (the batch's
    /// baseSequence plus the record's offset delta); -1 for a producer without idempotence
    /// (RecordBatch.NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE).
    #[serde(default = "no_producer_id")]
    pub producer_id: i64,
    #[serde(default = "no_producer_epoch")]
    pub producer_epoch: i16,
    #[serde(default = "no_sequence")]
    pub sequence: i32,
}

fn no_producer_id() -> i64 {
    NO_PRODUCER_ID
}
fn no_producer_epoch() -> i16 {
    NO_PRODUCER_EPOCH
}
fn no_sequence() -> i32 {
    NO_SEQUENCE
}
