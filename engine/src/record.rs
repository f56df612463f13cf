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
    /// The record's key (version 2's per-produce `key`), as UTF-8 bytes; none in version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The value's size in bytes when it is not the value's own text (version 2's
    /// `record_size_bytes` or a produce's `size`: the record stands for a value that long);
    /// `None` in version 1, where the value's UTF-8 bytes are its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
}

/// What a produce's records carry besides their values: the key and the value size
/// (version 2's per-produce `key` and `size`, or `record_size_bytes`), one for every record
/// of a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordShape {
    pub key: Option<String>,
    pub size: Option<u32>,
}

impl RecordShape {
    /// The bytes of a record of this shape with `value`, at `offset_delta` in its batch
    /// (DefaultRecord.sizeInBytes, timestamp delta 0).
    pub fn record_bytes(&self, offset_delta: u64, value: &str) -> u64 {
        let key = self.key.as_ref().map_or(-1, |k| k.len() as i64);
        let value = self.size.map_or(value.len() as i64, i64::from);
        record_size_in_bytes(offset_delta, 0, key, value)
    }

    /// The bytes of a batch of `values` of this shape (DefaultRecordBatch.sizeInBytes).
    pub fn batch_bytes(&self, values: &[String]) -> u64 {
        let mut size = RECORD_BATCH_OVERHEAD;
        for (i, v) in values.iter().enumerate() {
            size += self.record_bytes(i as u64, v);
        }
        size
    }
}

/// DefaultRecordBatch.RECORD_BATCH_OVERHEAD: a batch's header, 61 bytes (base offset 8,
/// length 4, partition leader epoch 4, magic 1, CRC 4, attributes 2, last offset delta 4,
/// base timestamp 8, max timestamp 8, producer id 8, producer epoch 2, base sequence 4,
/// records count 4).
pub const RECORD_BATCH_OVERHEAD: u64 = 61;

/// ByteUtils.sizeOfVarint: the bytes of `v` zigzag-encoded 7 bits a byte (also
/// sizeOfVarlong for the values the engine has).
pub fn size_of_varint(v: i64) -> u64 {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while z >= 0x80 {
        z >>= 7;
        n += 1;
    }
    n
}

/// DefaultRecord.sizeInBytes(offsetDelta, timestampDelta, keySize, valueSize, headers = []):
/// attributes 1, the offset and timestamp deltas, the key (-1: null, one byte) and value
/// each with a varint length, the header count (0, one byte), and the body's own varint
/// length in front.
pub fn record_size_in_bytes(offset_delta: u64, timestamp_delta: i64, key: i64, value: i64) -> u64 {
    let part = |n: i64| size_of_varint(n) + n.max(0) as u64;
    let body = 1
        + size_of_varint(offset_delta as i64)
        + size_of_varint(timestamp_delta)
        + part(key)
        + part(value)
        + 1;
    body + size_of_varint(body as i64)
}

/// DefaultRecord.recordSizeUpperBound(key, value, headers = []): MAX_RECORD_OVERHEAD (21) and
/// the key, value and header count with their varint lengths. A new batch's buffer is
/// `max(batch.size, RECORD_BATCH_OVERHEAD + this)` (RecordAccumulator.append,
/// AbstractRecords.estimateSizeInBytesUpperBound).
pub fn record_size_upper_bound(shape: &RecordShape, value: &str) -> u64 {
    let part = |n: i64| size_of_varint(n) + n.max(0) as u64;
    let key = shape.key.as_ref().map_or(-1, |k| k.len() as i64);
    let value = shape.size.map_or(value.len() as i64, i64::from);
    21 + part(key) + part(value) + 1
}

impl Record {
    /// The value's bytes: its `size`, or else its text's UTF-8 length.
    pub fn value_bytes(&self) -> u64 {
        self.size.map_or(self.value.len() as u64, u64::from)
    }

    /// This record's bytes in its batch (DefaultRecord.sizeInBytes). The records of a batch
    /// share one timestamp here (a produce's records are sent at one instant), so the
    /// timestamp delta is 0.
    pub fn size_in_bytes(&self) -> u64 {
        let key = self.key.as_ref().map_or(-1, |k| k.len() as i64);
        record_size_in_bytes(
            self.offset - self.batch_base,
            0,
            key,
            self.value_bytes() as i64,
        )
    }
}

/// DefaultRecordBatch.sizeInBytes(baseOffset, records): RECORD_BATCH_OVERHEAD plus each
/// record's size; 0 for no records. `records` are one batch's (or its tail's: a batch is
/// measured whole by its caller). The one way to get a batch's bytes on the log, for the
/// fetch limits and anything that meters replication by bytes (throttles).
pub fn batch_size_in_bytes(records: &[Record]) -> u64 {
    if records.is_empty() {
        return 0;
    }
    let mut size = RECORD_BATCH_OVERHEAD;
    for r in records {
        size += r.size_in_bytes();
    }
    size
}

/// The bytes of `records` as whole batches (each run of one `batch_base` measured by
/// [`batch_size_in_bytes`]): what the replication throttle meters (`quota.rs`).
pub fn records_size_in_bytes(records: &[Record]) -> u64 {
    let mut size = 0;
    let mut batch = None;
    for r in records {
        if batch != Some(r.batch_base) {
            batch = Some(r.batch_base);
            size += RECORD_BATCH_OVERHEAD;
        }
        size += r.size_in_bytes();
    }
    size
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(offset: u64, key: Option<&str>, value: &str) -> Record {
        Record {
            offset,
            epoch: 0,
            batch_base: 0,
            value: value.to_string(),
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            sequence: NO_SEQUENCE,
            key: key.map(str::to_string),
            size: None,
        }
    }

    /// ByteUtilsTest's varint sizes: zigzag, so 63 takes one byte and 64 two, -1 one (it is
    /// 1 zigzagged), -64 one, -65 two; 2^13 - 1 = 8191 two (zigzag 16382), 8192 three.
    #[test]
    fn varint_sizes_are_zigzag_seven_bits_a_byte() {
        for (v, n) in [
            (0, 1),
            (63, 1),
            (64, 2),
            (-1, 1),
            (-64, 1),
            (-65, 2),
            (8191, 2),
            (8192, 3),
            (i64::from(i32::MAX), 5),
        ] {
            assert_eq!(size_of_varint(v), n, "sizeOfVarint({v})");
        }
    }

    /// DefaultRecord.sizeInBytes worked by hand.
    #[test]
    fn record_sizes_by_kafkas_formula() {
        // No key, value "value" (5 bytes), first in its batch: attributes 1 + offset delta 1 +
        // timestamp delta 1 + null key 1 + varint(5) 1 + 5 + header count 1 = 11, and its
        // length varint(11) 1: 12 (RecordAccumulatorTest's "value" record).
        assert_eq!(record_size_in_bytes(0, 0, -1, 5), 12);
        assert_eq!(rec(0, None, "value").size_in_bytes(), 12);
        // Key "key" (3 bytes): 1 + 1 + 1 + (1 + 3) + (1 + 5) + 1 = 14, plus 1: 15.
        assert_eq!(rec(0, Some("key"), "value").size_in_bytes(), 15);
        // A value of 1024 bytes: varint(1024) is 2 (zigzag 2048), body 1 + 1 + 1 + 1 + 2 +
        // 1024 + 1 = 1031, varint(1031) 2: 1033.
        assert_eq!(record_size_in_bytes(0, 0, -1, 1024), 1033);
        // At offset delta 64 the delta takes two bytes: 1034.
        assert_eq!(record_size_in_bytes(64, 0, -1, 1024), 1034);
        // DefaultRecordBatchTest.testSizeInBytes's records at 0 s, 30 s and 60 s: a
        // timestamp delta of 30000 is varint 3 bytes (zigzag 60000 needs 16 bits), no key:
        // 1 + 1 + 3 + 1 + 6 + 1 = 13, plus 1: 14. Key "key", null value, delta 60000:
        // 1 + 1 + 3 + 4 + 1 + 1 = 11, plus 1: 12.
        assert_eq!(record_size_in_bytes(1, 30_000, -1, 5), 14);
        assert_eq!(record_size_in_bytes(2, 60_000, 3, -1), 12);
        // A `size` stands for the value's bytes, whatever its text.
        let mut big = rec(0, None, "v1");
        big.size = Some(1024);
        assert_eq!(big.size_in_bytes(), 1033);
    }

    /// DefaultRecordBatch.sizeInBytes: 61 and the records, with their offset deltas.
    #[test]
    fn batch_size_is_the_overhead_and_the_records() {
        assert_eq!(batch_size_in_bytes(&[]), 0);
        // Three records "v1", "v2", "v3" (2 bytes each): 1+1+1+1+1+2+1 = 8, plus 1: 9 each.
        let three: Vec<Record> = (0..3)
            .map(|i| rec(i, None, &format!("v{}", i + 1)))
            .collect();
        assert_eq!(batch_size_in_bytes(&three), 61 + 27);
        // A batch whose base is 10: the deltas, not the offsets, are sized.
        let mut later = three.clone();
        for r in &mut later {
            r.offset += 10;
            r.batch_base = 10;
        }
        assert_eq!(batch_size_in_bytes(&later), 88);
    }
}
