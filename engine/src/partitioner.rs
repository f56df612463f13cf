//! How the producer picks a record's partition, as Kafka's client does it
//! (clients/.../producer/KafkaProducer.java, producer/internals/BuiltInPartitioner.java):
//!
//! - a record that names its partition goes there;
//! - a keyed record goes to its key's partition (`partition_for_key`, murmur2), unless
//!   `partitioner.ignore.keys`;
//! - any other record goes to the topic's sticky partition (KIP-794): one partition until
//!   `batch.size` bytes were produced to it, then another, chosen at random among the
//!   partitions with a leader, or weighted towards the partitions with the shortest queues
//!   when `partitioner.adaptive.partitioning.enable` (the default) gave it load statistics.
//!
//! The accumulator drives the sticky partitioner in five steps (the javadoc of
//! BuiltInPartitioner.peekCurrentPartitionInfo, and RecordAccumulator.append):
//! 1. `peek_current_partition_info` says which partition to append to;
//! 2. the accumulator takes that partition's queue;
//! 3. `partition_changed` completes a switch that an incomplete batch held back, and if it
//!    switched, the accumulator starts again at step 1;
//! 4. it appends the record;
//! 5. `update_partition_info` counts the bytes appended and switches once there are enough;
//!    `enable_switch` is whether every batch of the queue is full.
//!
//! Kafka's producer runs these under a lock per queue, because threads race for the sticky
//! partition (`isPartitionChanged`); the engine's producer is one node, so no race happens and
//! a switch is reported by the call that makes it.
//!
//! The load statistics come from the accumulator's queues on each `ready()`
//! (`partition_load_queue_sizes`, RecordAccumulator.partitionReady), leaving out the
//! partitions whose leader has not taken a batch for `partitioner.availability.timeout.ms`
//! (`NodeStats`, RecordAccumulator.updateNodeLatencyStats).
//!
//! Randomness comes from [`RandomInt`], the engine's seeded generator in a simulation.

// The load statistics and the node latency statistics are ported and tested but not used
// by the engine's producer (its queues are empty whenever it picks: see `append_records`).
#![cfg_attr(not(test), allow(dead_code))]

use std::fmt;

use crate::error::ConfigError;
use crate::hashing::{partition_for_key, to_positive};
use crate::rng::Rng;
use crate::types::{BrokerId, TimeMs};
use crate::vec_map::VecMap;

/// ProducerConfig's `batch.size` default: 16 KiB, also the bytes a keyless record's sticky
/// partition takes before the partitioner switches.
pub(crate) const BATCH_SIZE_DEFAULT: u64 = 16_384;

/// The producer configs the partitioner reads, with ProducerConfig's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionerConfig {
    /// `batch.size` (16384).
    pub batch_size: u64,
    /// `partitioner.adaptive.partitioning.enable` (true): switch to partitions with shorter
    /// queues more often.
    pub adaptive_partitioning_enable: bool,
    /// `partitioner.availability.timeout.ms` (0: off): a partition whose leader has not been
    /// able to take a batch for this long is left out of the adaptive choice.
    pub availability_timeout_ms: u64,
    /// `partitioner.ignore.keys` (false): keyed records are placed as keyless ones.
    pub ignore_keys: bool,
}

impl Default for PartitionerConfig {
    fn default() -> Self {
        PartitionerConfig {
            batch_size: BATCH_SIZE_DEFAULT,
            adaptive_partitioning_enable: true,
            availability_timeout_ms: 0,
            ignore_keys: false,
        }
    }
}

impl PartitionerConfig {
    /// The sticky partitioner's switch threshold. KafkaProducer's constructor:
    /// `Math.max(1, config.getInt(BATCH_SIZE_CONFIG))` ("batch.size may be set to 0 to
    /// explicitly disable batching which in practice actually means using a batch size of 1"),
    /// and RecordAccumulator hands its batch size to each topic's BuiltInPartitioner.
    pub(crate) fn sticky_batch_size(&self) -> u64 {
        self.batch_size.max(1)
    }
}

/// Where the partitioner's random numbers come from. BuiltInPartitioner.randomPartition:
/// `Utils.toPositive(ThreadLocalRandom.current().nextInt())`; this is the `nextInt()`, a
/// uniformly distributed Java `int` (any of the 2^32 values), and the partitioner applies
/// `toPositive` itself.
pub(crate) trait RandomInt {
    fn next_int(&mut self) -> i32;
}

/// The simulation's seeded generator plays `ThreadLocalRandom`: the high 32 bits of its next
/// value, read as a Java `int`.
impl RandomInt for Rng {
    fn next_int(&mut self) -> i32 {
        (self.next_u64() >> 32) as u32 as i32
    }
}

/// A record that names a partition the topic does not have.
///
/// KafkaProducer.waitOnMetadata waits for metadata that has the partition and, after
/// `max.block.ms`, fails the send with `TimeoutException("Partition %d of topic %s with
/// partition count %d is not present in metadata after %d ms.")`. The engine's clients always
/// know the current metadata, so that wait could never end: the record is refused instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidPartition {
    pub partition: u32,
    pub partition_count: u32,
}

impl fmt::Display for InvalidPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "partition {} does not exist: the topic's partition count is {}",
            self.partition, self.partition_count
        )
    }
}

/// KafkaProducer.partition, with KafkaProducer.waitOnMetadata's range check before it: the
/// partition a record names, else its key's (BuiltInPartitioner.partitionForKey over the
/// topic's partition count) unless `partitioner.ignore.keys`, else `None`
/// (`RecordMetadata.UNKNOWN_PARTITION`: the accumulator's sticky partition, see
/// [`BuiltInPartitioner`]). There is no `partitioner.class` here, so the custom partitioner's
/// branch is not taken.
///
/// `partition_count` is at least 1 (a topic has a partition); `explicit` comes from the
/// scenario, and one the topic does not have is an [`InvalidPartition`].
pub(crate) fn partition(
    explicit: Option<u32>,
    key: Option<&[u8]>,
    partition_count: u32,
    ignore_keys: bool,
) -> Result<Option<u32>, InvalidPartition> {
    assert!(partition_count > 0, "a topic has at least one partition");
    // KafkaProducer.partition: `if (record.partition() != null) return record.partition();`
    // (waitOnMetadata has waited until `partition < partitionsCount`).
    if let Some(partition) = explicit {
        if partition >= partition_count {
            return Err(InvalidPartition {
                partition,
                partition_count,
            });
        }
        return Ok(Some(partition));
    }
    // `if (serializedKey != null && !partitionerIgnoreKeys)`: hash the key bytes.
    match key {
        Some(key) if !ignore_keys => Ok(Some(partition_for_key(key, partition_count))),
        _ => Ok(None),
    }
}

/// BuiltInPartitioner.StickyPartitionInfo: the current sticky partition and the bytes
/// produced to it since it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StickyPartitionInfo {
    pub partition: u32,
    pub produced_bytes: u64,
}

/// BuiltInPartitioner.PartitionLoadStats: the cumulative frequency table over the first
/// `length` entries, and the partition of each entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PartitionLoadStats {
    cumulative_frequency_table: Vec<u32>,
    partition_ids: Vec<u32>,
    length: usize,
}

/// The queue sizes RecordAccumulator.partitionReady collects for one topic and hands to
/// BuiltInPartitioner.updatePartitionLoadStats: a size and a partition per entry, of which the
/// first `length` count (partitions on slow leaders are dropped by shortening `length`, not
/// the arrays).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueueSizes {
    pub queue_sizes: Vec<u32>,
    pub partition_ids: Vec<u32>,
    pub length: usize,
}

/// BuiltInPartitioner: one topic's sticky partition for keyless records (KIP-794), and the
/// load statistics that weight the choice of the next one.
///
/// `leaders` is what the producer's metadata says of the topic's partitions, by partition
/// index: each one's leader, `None` while it has none (Cluster.partitionsForTopic, in
/// partition order; Cluster.availablePartitionsForTopic are those with a leader).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuiltInPartitioner {
    sticky_batch_size: u64,
    sticky_partition_info: Option<StickyPartitionInfo>,
    partition_load_stats: Option<PartitionLoadStats>,
}

impl BuiltInPartitioner {
    /// BuiltInPartitioner's constructor: `stickyBatchSize` (the producer's batch size, see
    /// [`PartitionerConfig::sticky_batch_size`]) must be at least 1.
    pub(crate) fn new(sticky_batch_size: u64) -> Result<Self, ConfigError> {
        if sticky_batch_size < 1 {
            return Err(ConfigError {
                field: "batch.size".to_string(),
                message: format!("stickyBatchSize must be >= 1 but got {sticky_batch_size}"),
            });
        }
        Ok(BuiltInPartitioner {
            sticky_batch_size,
            sticky_partition_info: None,
            partition_load_stats: None,
        })
    }

    /// The producer's partitioner of a topic: KafkaProducer hands the accumulator
    /// `Math.max(1, batch.size)`, so the constructor's check cannot fail there.
    pub(crate) fn for_batch_size(batch_size: u64) -> Self {
        BuiltInPartitioner {
            sticky_batch_size: batch_size.max(1),
            sticky_partition_info: None,
            partition_load_stats: None,
        }
    }

    /// BuiltInPartitioner.peekCurrentPartitionInfo: the current sticky partition, chosen now
    /// (nextPartition) if there is none yet.
    pub(crate) fn peek_current_partition_info(
        &mut self,
        leaders: &[Option<BrokerId>],
        random: &mut impl RandomInt,
    ) -> StickyPartitionInfo {
        if let Some(info) = self.sticky_partition_info {
            return info;
        }
        // "We're the first to create it."
        let info = StickyPartitionInfo {
            partition: self.next_partition(leaders, random),
            produced_bytes: 0,
        };
        self.sticky_partition_info = Some(info);
        info
    }

    /// BuiltInPartitioner.updatePartitionInfo: count `appended_bytes` produced to the sticky
    /// partition, and switch to the next partition once `stickyBatchSize` bytes were produced
    /// and `enable_switch` (every batch of the partition's queue is full: an incomplete batch
    /// holds the switch back so as not to leave a fractional batch behind), or once twice
    /// `stickyBatchSize` were produced whatever `enable_switch` says. The new partition is
    /// drawn now, and starts at 0 bytes. Returns whether it switched (the accumulator's
    /// `isPartitionChanged` right after).
    ///
    /// The caller peeked first (step 1 of the module's steps): the sticky partition exists.
    pub(crate) fn update_partition_info(
        &mut self,
        appended_bytes: u64,
        enable_switch: bool,
        leaders: &[Option<BrokerId>],
        random: &mut impl RandomInt,
    ) -> bool {
        let info = self
            .sticky_partition_info
            .as_mut()
            .expect("the accumulator peeked the sticky partition before appending to it");
        info.produced_bytes += appended_bytes;
        let produced_bytes = info.produced_bytes;

        // "We cap the produced bytes to not exceed 2x of the batch size to avoid pathological
        // cases": `producedBytes >= stickyBatchSize && enableSwitch || producedBytes >=
        // stickyBatchSize * 2`.
        if produced_bytes >= self.sticky_batch_size && enable_switch
            || produced_bytes >= self.sticky_batch_size * 2
        {
            // "We've produced enough to this partition, switch to next."
            let partition = self.next_partition(leaders, random);
            self.sticky_partition_info = Some(StickyPartitionInfo {
                partition,
                produced_bytes: 0,
            });
            return true;
        }
        false
    }

    /// RecordAccumulator.partitionChanged (step 3 of the module's steps), called with the
    /// sticky partition's queue in hand: "We might have disabled partition switch if the queue
    /// had incomplete batches. Check if all batches are full now and switch": with
    /// `all_batches_full`, count 0 bytes with the switch enabled. Returns whether the
    /// partition changed, in which case the accumulator peeks again and retries. (Its other
    /// case, another thread having switched, cannot happen in one node.)
    pub(crate) fn partition_changed(
        &mut self,
        all_batches_full: bool,
        leaders: &[Option<BrokerId>],
        random: &mut impl RandomInt,
    ) -> bool {
        all_batches_full && self.update_partition_info(0, true, leaders, random)
    }

    /// BuiltInPartitioner.updatePartitionLoadStats: from the queue sizes of the partitions
    /// with a leader (see [`QueueSizes`]), the cumulative frequency table nextPartition draws
    /// from; `None` (Kafka's `queueSizes == null`: adaptive partitioning off, or not every
    /// partition has a queue yet) clears it, and so do fewer than two partitions and queues of
    /// one size.
    ///
    /// Kafka's example: queue sizes `0 3 1`, inverted against the largest plus one (4) as
    /// `4 1 3`, summed as `4 5 8`; a random number in `0..8` picks the first entry above it, so
    /// 0..=3 pick the first partition, 4 the second, 5..=7 the third.
    pub(crate) fn update_partition_load_stats(&mut self, queue_sizes: Option<QueueSizes>) {
        let Some(QueueSizes {
            mut queue_sizes,
            partition_ids,
            length,
        }) = queue_sizes
        else {
            // "No load stats for topic {}, not using adaptive".
            self.partition_load_stats = None;
            return;
        };
        assert_eq!(queue_sizes.len(), partition_ids.len());
        assert!(length <= queue_sizes.len());

        // "The queueSizes.length represents the number of all partitions in the topic and if
        // we have less than 2 partitions, there is no need to do adaptive logic." With
        // partitions left out for latency (`length` below the arrays' length), even one
        // partition goes through it.
        if length < 1 || queue_sizes.len() < 2 {
            self.partition_load_stats = None;
            return;
        }

        // "Calculate max queue size + 1 and check if all sizes are the same."
        let mut max_size_plus1 = queue_sizes[0];
        let mut all_equal = true;
        for &size in &queue_sizes[1..length] {
            if size != max_size_plus1 {
                all_equal = false;
            }
            if size > max_size_plus1 {
                max_size_plus1 = size;
            }
        }
        max_size_plus1 += 1;

        if all_equal && length == queue_sizes.len() {
            // "All queue lengths are the same, not using adaptive" (uniform is the same).
            self.partition_load_stats = None;
            return;
        }

        // "Invert and fold the queue size, so that they become separator values in the CFT."
        // In place, as Kafka does. Each frequency is at least 1, so the table is strictly
        // increasing.
        queue_sizes[0] = max_size_plus1 - queue_sizes[0];
        for i in 1..length {
            queue_sizes[i] = max_size_plus1 - queue_sizes[i] + queue_sizes[i - 1];
        }
        self.partition_load_stats = Some(PartitionLoadStats {
            cumulative_frequency_table: queue_sizes,
            partition_ids,
            length,
        });
    }

    /// BuiltInPartitioner.loadStatsRangeEnd (Kafka's tests use it): the end of the range the
    /// weighted draw falls in, the table's last entry; `None` without load statistics.
    pub(crate) fn load_stats_range_end(&self) -> Option<u32> {
        let stats = self.partition_load_stats.as_ref()?;
        Some(stats.cumulative_frequency_table[stats.length - 1])
    }

    /// BuiltInPartitioner.nextPartition: a random partition among those with a leader
    /// (among all if none has one), or, with load statistics, one drawn from the cumulative
    /// frequency table, which leaves out the partitions without a leader.
    fn next_partition(&self, leaders: &[Option<BrokerId>], random: &mut impl RandomInt) -> u32 {
        // The draw comes first, whichever branch uses it.
        let random = random_partition(random);

        let Some(stats) = &self.partition_load_stats else {
            // "We don't have stats to do adaptive partitioning (or it's disabled), just switch
            // to the next partition based on uniform distribution."
            let available = count(leaders.iter().filter(|leader| leader.is_some()).count());
            if available > 0 {
                // availablePartitions.get(random % availablePartitions.size()).partition()
                return nth_available(leaders, random % available);
            }
            // "We don't have available partitions, just pick one among all partitions."
            assert!(!leaders.is_empty(), "a topic has at least one partition");
            return random % count(leaders.len());
        };

        // "Calculate next partition based on load distribution."
        assert!(stats.length > 0);
        let table = &stats.cumulative_frequency_table[..stats.length];
        let weighted_random = random % table[stats.length - 1];
        // Arrays.binarySearch then `Math.abs(searchResult + 1)`: the index of the first entry
        // strictly greater than the draw. The table is strictly increasing, so that is the
        // partition point of the entries at most the draw.
        let partition_index = table.partition_point(|&separator| separator <= weighted_random);
        assert!(partition_index < stats.length);
        stats.partition_ids[partition_index]
    }
}

/// RecordAccumulator.NodeLatencyStats: the last time a leader had batches ready to send, and
/// the last time the producer could send them to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NodeLatencyStats {
    pub ready_time_ms: TimeMs,
    pub drain_time_ms: TimeMs,
}

/// RecordAccumulator.nodeStats: each leader's [`NodeLatencyStats`], by broker id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeStats {
    by_node: VecMap<BrokerId, NodeLatencyStats>,
}

impl NodeStats {
    /// RecordAccumulator.updateNodeLatencyStats, which Sender.sendProducerData calls for each
    /// leader with batches ready: `can_drain` when the connection could take them (then both
    /// times move, "this would reset the node latency"), else only the ready time moves, so
    /// the difference is how long data has waited for the leader. Nothing is kept while
    /// `partitioner.availability.timeout.ms` is 0 ("Don't bother with updating stats if the
    /// feature is turned off").
    pub(crate) fn update_node_latency_stats(
        &mut self,
        node: BrokerId,
        now_ms: TimeMs,
        can_drain: bool,
        availability_timeout_ms: u64,
    ) {
        if availability_timeout_ms == 0 {
            return;
        }
        // `computeIfAbsent(nodeId, id -> new NodeLatencyStats(nowMs))`: both times now.
        if !self.by_node.contains_key(&node) {
            self.by_node.insert(
                node,
                NodeLatencyStats {
                    ready_time_ms: now_ms,
                    drain_time_ms: now_ms,
                },
            );
        }
        let stats = &mut self.by_node[&node];
        if can_drain {
            stats.drain_time_ms = now_ms;
        }
        stats.ready_time_ms = now_ms;
    }

    pub(crate) fn get(&self, node: BrokerId) -> Option<&NodeLatencyStats> {
        self.by_node.get(&node)
    }
}

/// The queue sizes RecordAccumulator.partitionReady collects for one topic on each
/// `ready()`, for [`BuiltInPartitioner::update_partition_load_stats`].
///
/// `deque_sizes` is the accumulator's queue of each partition, by partition index: `None` while
/// the accumulator has none for it (no record was ever appended there: its `batches` map has
/// no entry), else its number of batches. `leaders` as for [`BuiltInPartitioner`].
///
/// `None` unless adaptive partitioning is on and every partition has a queue ("We don't do
/// adaptive partitioning until we scheduled at least a batch for all partitions"). Then one
/// entry per queue: a partition with a leader takes the next entry; an empty queue keeps the
/// entry's size as it is; a partition whose leader has waited longer than
/// `partitioner.availability.timeout.ms` gives its entry back (`--queueSizesIndex`), so the
/// next partition overwrites it. Kafka walks a `ConcurrentHashMap<Integer, …>` here; holding
/// every partition 0..n-1 in a table larger than n, it walks them in partition order, as this
/// does.
pub(crate) fn partition_load_queue_sizes(
    deque_sizes: &[Option<u32>],
    leaders: &[Option<BrokerId>],
    node_stats: &NodeStats,
    config: &PartitionerConfig,
) -> Option<QueueSizes> {
    assert_eq!(deque_sizes.len(), leaders.len());
    let mut queues = 0;
    for deque in deque_sizes {
        if deque.is_some() {
            queues += 1;
        }
    }
    // `enableAdaptivePartitioning && batches.size() >=
    // cluster.partitionsForTopic(topic).size()`.
    if !config.adaptive_partitioning_enable || queues < leaders.len() {
        return None;
    }
    let mut queue_sizes = vec![0; queues];
    let mut partition_ids = vec![0; queues];
    // Kafka's `queueSizesIndex + 1`.
    let mut length = 0;
    for (partition, deque) in deque_sizes.iter().enumerate() {
        let Some(deque_size) = *deque else {
            continue;
        };
        let leader = leaders[partition];
        // "Advance queueSizesIndex so that we properly index available partitions."
        if leader.is_some() {
            length += 1;
            partition_ids[length - 1] = count(partition);
        }
        // "Deques are often empty in this path, esp with large partition counts, so we exit
        // early if we can."
        if deque_size == 0 {
            continue;
        }
        // A partition without a leader: its topic is among the unknown-leader topics.
        let Some(leader) = leader else {
            continue;
        };
        queue_sizes[length - 1] = deque_size;
        if config.availability_timeout_ms > 0 {
            // "Check if we want to exclude the partition from the list of available partitions
            // if the broker hasn't responded for some time."
            if let Some(stats) = node_stats.get(leader) {
                let waited_ms = stats.ready_time_ms.saturating_sub(stats.drain_time_ms);
                if waited_ms > config.availability_timeout_ms {
                    length -= 1;
                }
            }
        }
    }
    Some(QueueSizes {
        queue_sizes,
        partition_ids,
        length,
    })
}

/// BuiltInPartitioner.randomPartition: `Utils.toPositive(ThreadLocalRandom.current().nextInt())`,
/// in `0..=i32::MAX`.
fn random_partition(random: &mut impl RandomInt) -> u32 {
    to_positive(random.next_int()) as u32
}

/// The `n`th partition with a leader, in partition order.
fn nth_available(leaders: &[Option<BrokerId>], n: u32) -> u32 {
    let mut seen = 0;
    for (partition, leader) in leaders.iter().enumerate() {
        if leader.is_some() {
            if seen == n {
                return count(partition);
            }
            seen += 1;
        }
    }
    // Not reached: `n` is below the count of partitions with a leader (a plain panic: a
    // formatted one is more code in the wasm).
    unreachable!()
}

/// A number of partitions, or a partition index, as Kafka's `int` (the engine's topics are far
/// smaller).
fn count(n: usize) -> u32 {
    debug_assert!(u32::try_from(n).is_ok());
    n as u32
}

/// A batch of one produce action as MemoryRecordsBuilder counts it, uncompressed: its bytes
/// (estimatedBytesWritten: the header and the records), its buffer's size (`write_limit`),
/// and whether it was closed for appends.
#[derive(Debug, Clone, Copy)]
struct OpenBatch {
    /// Its index in the action's batches.
    index: usize,
    size_bytes: u64,
    write_limit: u64,
    records: u64,
    closed: bool,
}

impl OpenBatch {
    /// MemoryRecordsBuilder.isFull.
    fn is_full(&self) -> bool {
        self.closed || (self.records > 0 && self.write_limit <= self.size_bytes)
    }
}

/// RecordAccumulator.allBatchesFull: "Only the last batch may be incomplete".
fn all_batches_full(deque: &[OpenBatch]) -> bool {
    deque.last().is_none_or(OpenBatch::is_full)
}

/// RecordAccumulator.tryAppend on the last batch of `deque`: the bytes appended, or None (and
/// the batch closed) when the record does not fit.
fn try_append(
    deque: &mut [OpenBatch],
    batches: &mut [(u32, Vec<String>)],
    shape: &crate::record::RecordShape,
    value: &str,
) -> Option<u64> {
    let last = deque.last_mut()?;
    let bytes = shape.record_bytes(last.records, value);
    if last.is_full() || last.write_limit < last.size_bytes + bytes {
        last.closed = true;
        return None;
    }
    last.size_bytes += bytes;
    last.records += 1;
    batches[last.index].1.push(value.to_string());
    Some(bytes)
}

/// One produce action's records appended as RecordAccumulator.append does, each to the
/// partition `fixed` names (a record that names its partition, or a keyed one:
/// [`partition`]) or else to the topic's sticky partition (`partitioner`): a record joins the
/// last batch of its partition while MemoryRecordsBuilder.hasRoomFor (the batch's bytes and
/// the record's within `batch.size`; a batch always takes its first record, in a buffer of
/// `max(batch.size, the record's upper bound)`), else a new batch starts; the sticky partition
/// counts the bytes appended and switches at `batch.size` as [`BuiltInPartitioner`] says.
/// Returns the batches in the order they were created, each with its partition.
///
/// The engine's producer appends an action's records all at once, before its sender drains
/// any of them (Kafka's sender thread races the application's `send` calls), and every batch
/// of an earlier action has left the accumulator by then; with `one_by_one`
/// (`send().get()`) each record's batch is sent and answered before the next record comes,
/// so every queue is empty at each append. The queues are never different in size when the
/// adaptive partitioner looks (all empty), so its load statistics stay unset
/// (updatePartitionLoadStats clears them for queues of one size) and the next sticky
/// partition is drawn uniformly among the partitions with a leader.
#[allow(clippy::too_many_arguments)]
pub(crate) fn append_records(
    partitioner: &mut BuiltInPartitioner,
    fixed: Option<u32>,
    values: Vec<String>,
    shape: &crate::record::RecordShape,
    batch_size: u64,
    one_by_one: bool,
    leaders: &[Option<BrokerId>],
    random: &mut impl RandomInt,
) -> Vec<(u32, Vec<String>)> {
    let mut batches: Vec<(u32, Vec<String>)> = Vec::new();
    // A loop, not `vec![Vec::new(); n]` (whose `Clone` is more code in the wasm).
    let mut deques: Vec<Vec<OpenBatch>> = Vec::with_capacity(leaders.len());
    for _ in leaders {
        deques.push(Vec::new());
    }
    for value in values {
        if one_by_one {
            for d in &mut deques {
                d.clear();
            }
        }
        let upper = crate::record::RECORD_BATCH_OVERHEAD
            + crate::record::record_size_upper_bound(shape, &value);
        // "Loop to retry in case we encounter partitioner's race conditions."
        loop {
            let effective = match fixed {
                Some(p) => p,
                None => {
                    partitioner
                        .peek_current_partition_info(leaders, random)
                        .partition
                }
            };
            let deque = &mut deques[effective as usize];
            // Under the queue's lock: the held-back switch, then the last batch.
            if fixed.is_none()
                && partitioner.partition_changed(all_batches_full(deque), leaders, random)
            {
                continue;
            }
            // RecordAccumulator.tryAppend: the last batch, if the record fits
            // (MemoryRecordsBuilder.hasRoomFor; "we always allow at least one record"),
            // else it is closed for appends; then, the lock taken again, the held-back switch
            // once more, and appendNewBatch.
            let appended_bytes = match try_append(deque, &mut batches, shape, &value) {
                Some(bytes) => bytes,
                None => {
                    if fixed.is_none()
                        && partitioner.partition_changed(all_batches_full(deque), leaders, random)
                    {
                        continue;
                    }
                    let size_bytes =
                        crate::record::RECORD_BATCH_OVERHEAD + shape.record_bytes(0, &value);
                    deque.push(OpenBatch {
                        index: batches.len(),
                        size_bytes,
                        write_limit: batch_size.max(upper),
                        records: 1,
                        closed: false,
                    });
                    batches.push((effective, vec![value.clone()]));
                    size_bytes
                }
            };
            if fixed.is_none() {
                let enable_switch = all_batches_full(deque);
                partitioner.update_partition_info(appended_bytes, enable_switch, leaders, random);
            }
            break;
        }
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BuiltInPartitionerTest.SequentialPartitioner and RecordAccumulatorTest's `mockRandom`:
    /// the draws are 0, 1, 2, … (`mockRandom.getAndAdd(1)`). Kafka's mock replaces
    /// `randomPartition` whole; these values are non-negative, so `toPositive` leaves them as
    /// they are and the partitioner sees the same numbers. `next` is also how many were drawn.
    struct Sequential {
        next: i32,
    }

    impl RandomInt for Sequential {
        fn next_int(&mut self) -> i32 {
            let value = self.next;
            self.next += 1;
            value
        }
    }

    /// Draws given in advance, each once; a test that draws more than it scripted is wrong.
    struct Scripted {
        values: Vec<i32>,
        drawn: usize,
    }

    impl Scripted {
        fn new(values: &[i32]) -> Self {
            Scripted {
                values: values.to_vec(),
                drawn: 0,
            }
        }
    }

    impl RandomInt for Scripted {
        fn next_int(&mut self) -> i32 {
            let value = self.values[self.drawn];
            self.drawn += 1;
            value
        }
    }

    /// BuiltInPartitionerTest's NODES are brokers 0, 1, 2 and 11.
    const NODES: [BrokerId; 4] = [0, 1, 2, 11];

    /// One keyless record of `bytes` through steps 1 and 5 (as BuiltInPartitionerTest calls
    /// them): the partition it went to.
    fn produce(
        partitioner: &mut BuiltInPartitioner,
        bytes: u64,
        leaders: &[Option<BrokerId>],
        random: &mut impl RandomInt,
    ) -> u32 {
        let info = partitioner.peek_current_partition_info(leaders, random);
        partitioner.update_partition_info(bytes, true, leaders, random);
        info.partition
    }

    /// BuiltInPartitionerTest.testStickyPartitioning.
    #[test]
    fn test_sticky_partitioning() {
        // topicA's partitions 0, 1, 2 led by NODES[0..3]; topicB's one partition by NODES[0].
        let topic_a = [Some(NODES[0]), Some(NODES[1]), Some(NODES[2])];
        let topic_b = [Some(NODES[0])];

        // Create partitions with "sticky" batch size to accommodate 3 records.
        let mut random = Sequential { next: 0 };
        let mut partitioner_a = BuiltInPartitioner::new(3).expect("a valid size");

        // Test the partition is not switched until sticky batch size is reached.
        let info = partitioner_a.peek_current_partition_info(&topic_a, &mut random);
        let part_a = info.partition;
        partitioner_a.update_partition_info(1, true, &topic_a, &mut random);

        let info = partitioner_a.peek_current_partition_info(&topic_a, &mut random);
        assert_eq!(info.partition, part_a);
        partitioner_a.update_partition_info(1, true, &topic_a, &mut random);

        let info = partitioner_a.peek_current_partition_info(&topic_a, &mut random);
        assert_eq!(info.partition, part_a);
        partitioner_a.update_partition_info(1, true, &topic_a, &mut random);

        // After producing 3 records, partition must've switched.
        let info = partitioner_a.peek_current_partition_info(&topic_a, &mut random);
        assert_ne!(info.partition, part_a);

        // Check that switching works even when there is one partition.
        let mut partitioner_b = BuiltInPartitioner::new(1).expect("a valid size");
        for _ in 0..10 {
            assert_eq!(produce(&mut partitioner_b, 1, &topic_b, &mut random), 0);
        }
    }

    /// BuiltInPartitionerTest.unavailablePartitionsTest. Kafka's partitioner draws from
    /// ThreadLocalRandom here; the engine's seeded generator plays it.
    #[test]
    fn unavailable_partitions_test() {
        // Partition 1 in topic A, partition 0 in topic B and partition 0 in topic C are
        // unavailable partitions.
        let topic_a = [Some(NODES[0]), None, Some(NODES[2])];
        let topic_b = [None, Some(NODES[0])];
        let topic_c = [None];
        let mut random = Rng::new(14);

        // Create partitions with "sticky" batch size to accommodate 1 record.
        let mut partitioner_a = BuiltInPartitioner::new(1).expect("a valid size");

        // Assure we never choose partition 1 because it is unavailable.
        let part_a = produce(&mut partitioner_a, 1, &topic_a, &mut random);
        assert_ne!(part_a, 1);
        let mut found_another_part_a = false;
        for _ in 0..100 {
            let another_part_a = produce(&mut partitioner_a, 1, &topic_a, &mut random);
            assert_ne!(another_part_a, 1);
            found_another_part_a = found_another_part_a || another_part_a != part_a;
        }
        assert!(
            found_another_part_a,
            "Expected to find partition other than {part_a}"
        );

        // Assure we always choose partition 1 for topic B.
        let mut partitioner_b = BuiltInPartitioner::new(1).expect("a valid size");
        let part_b = produce(&mut partitioner_b, 1, &topic_b, &mut random);
        assert_eq!(part_b, 1);
        for _ in 0..100 {
            assert_eq!(produce(&mut partitioner_b, 1, &topic_b, &mut random), 1);
        }

        // Assure that we still choose the partition when there are no partitions available.
        let mut partitioner_c = BuiltInPartitioner::new(1).expect("a valid size");
        let part_c = produce(&mut partitioner_c, 1, &topic_c, &mut random);
        assert_eq!(part_c, 0);
        let info = partitioner_c.peek_current_partition_info(&topic_c, &mut random);
        assert_eq!(info.partition, 0);
    }

    /// BuiltInPartitionerTest.adaptivePartitionsTest.
    #[test]
    fn adaptive_partitions_test() {
        let mut random = Sequential { next: 0 };
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");

        // Simulate partition queue sizes.
        let queue_sizes = vec![5, 0, 3, 0, 1];
        let partition_ids: Vec<u32> = (0..5).collect();
        // 6 is max(queueSizes) + 1.
        let expected_frequencies: Vec<u32> = queue_sizes.iter().map(|q| 6 - q).collect();
        // Partition i is led by NODES[i % NODES.length].
        let leaders: Vec<Option<BrokerId>> = (0..5).map(|i| Some(NODES[i % 4])).collect();

        partitioner.update_partition_load_stats(Some(QueueSizes {
            queue_sizes: queue_sizes.clone(),
            partition_ids,
            length: 5,
        }));

        // Issue a certain number of partition calls to validate that the partitions would be
        // distributed with frequencies that are reciprocal to the queue sizes. The number of
        // iterations is defined by the last element of the cumulative frequency table which
        // is the sum of all frequencies. We do 2 cycles, just so it's more than 1.
        let number_of_cycles = 2;
        let range_end = partitioner.load_stats_range_end().expect("load stats");
        // 1 + 6 + 3 + 6 + 5 (worked by hand from the frequencies above).
        assert_eq!(range_end, 21);
        let number_of_iterations = range_end * number_of_cycles;
        let mut frequencies = [0u32; 5];
        for _ in 0..number_of_iterations {
            let partition = produce(&mut partitioner, 1, &leaders, &mut random);
            frequencies[partition as usize] += 1;
        }

        // Verify that frequencies are reciprocal of queue sizes.
        for (i, frequency) in frequencies.iter().enumerate() {
            assert_eq!(
                *frequency,
                expected_frequencies[i] * number_of_cycles,
                "Partition {i} was chosen {frequency} times"
            );
        }
    }

    /// BuiltInPartitionerTest.testStickyBatchSizeMoreThatZero (Kafka's spelling).
    #[test]
    fn test_sticky_batch_size_more_that_zero() {
        let error = BuiltInPartitioner::new(0).expect_err("0 is refused");
        assert_eq!(error.field, "batch.size");
        assert_eq!(error.message, "stickyBatchSize must be >= 1 but got 0");
        assert!(BuiltInPartitioner::new(1).is_ok());
    }

    /// KafkaProducer's constructor: `batch.size=0` means a batch size, and a sticky size, of 1.
    #[test]
    fn a_batch_size_of_zero_sticks_for_one_byte() {
        let config = PartitionerConfig {
            batch_size: 0,
            ..PartitionerConfig::default()
        };
        assert_eq!(config.sticky_batch_size(), 1);
        assert_eq!(PartitionerConfig::default().sticky_batch_size(), 16_384);
    }

    /// The switch at `batch.size` with the defaults: 1 KiB records go to one partition until
    /// 16 of them (16 × 1024 = 16384 bytes) were produced to it; the 17th goes to the next.
    #[test]
    fn keyless_records_stay_on_one_partition_until_batch_size_bytes_then_switch() {
        let config = PartitionerConfig::default();
        let leaders = [Some(1), Some(2), Some(3)];
        // The first draw picks partition 0 (0 % 3), the switch's draw partition 2 (5 % 3).
        let mut random = Scripted::new(&[0, 5]);
        let mut partitioner =
            BuiltInPartitioner::new(config.sticky_batch_size()).expect("a valid size");

        for record in 1..=15 {
            assert_eq!(produce(&mut partitioner, 1024, &leaders, &mut random), 0);
            let info = partitioner.peek_current_partition_info(&leaders, &mut random);
            assert_eq!(info.produced_bytes, record * 1024, "after record {record}");
        }
        // 15 × 1024 = 15360 bytes: one more record reaches 16384 and switches after it.
        assert_eq!(random.drawn, 1);
        assert_eq!(produce(&mut partitioner, 1024, &leaders, &mut random), 0);
        assert_eq!(random.drawn, 2);
        let info = partitioner.peek_current_partition_info(&leaders, &mut random);
        assert_eq!(
            info,
            StickyPartitionInfo {
                partition: 2,
                produced_bytes: 0
            }
        );
        assert_eq!(produce(&mut partitioner, 1024, &leaders, &mut random), 2);
    }

    /// BuiltInPartitioner.updatePartitionInfo's `enableSwitch`: past `stickyBatchSize` an
    /// incomplete batch holds the switch back; the accumulator completes it when the queue's
    /// batches are full (RecordAccumulator.partitionChanged), and at twice `stickyBatchSize`
    /// the partitioner switches anyway.
    #[test]
    fn an_incomplete_batch_holds_the_switch_back_up_to_twice_the_batch_size() {
        let leaders = [Some(1), Some(2), Some(3)];
        let mut random = Scripted::new(&[0, 1, 2]);
        let mut partitioner = BuiltInPartitioner::new(100).expect("a valid size");

        assert_eq!(
            partitioner.peek_current_partition_info(&leaders, &mut random),
            StickyPartitionInfo {
                partition: 0,
                produced_bytes: 0
            }
        );
        // 150 bytes, past 100, but the batch is not full: no switch.
        assert!(!partitioner.update_partition_info(150, false, &leaders, &mut random));
        // The queue still has an incomplete batch: partitionChanged does nothing.
        assert!(!partitioner.partition_changed(false, &leaders, &mut random));
        assert_eq!(
            partitioner
                .peek_current_partition_info(&leaders, &mut random)
                .produced_bytes,
            150
        );
        // The batches are full now: the held-back switch happens (draw 1: partition 1).
        assert!(partitioner.partition_changed(true, &leaders, &mut random));
        let info = partitioner.peek_current_partition_info(&leaders, &mut random);
        assert_eq!(info.partition, 1);
        assert_eq!(info.produced_bytes, 0);

        // On partition 1: 150 then 49 bytes with the switch disabled stay (199 < 200);
        // 1 more reaches 200 = twice the batch size and switches anyway (draw 2: partition 2).
        assert!(!partitioner.update_partition_info(150, false, &leaders, &mut random));
        assert!(!partitioner.update_partition_info(49, false, &leaders, &mut random));
        assert!(partitioner.update_partition_info(1, false, &leaders, &mut random));
        let info = partitioner.peek_current_partition_info(&leaders, &mut random);
        assert_eq!(info.partition, 2);
        assert_eq!(random.drawn, 3);
    }

    /// BuiltInPartitioner.randomPartition applies Utils.toPositive to the draw: -1 becomes
    /// 2147483647, and 2147483647 % 3 = 1 (its digits sum to 46, 46 mod 3 = 1), so partition 1;
    /// Integer.MIN_VALUE becomes 0, partition 0.
    #[test]
    fn a_negative_draw_is_made_positive_before_the_modulo() {
        let leaders = [Some(1), Some(2), Some(3)];
        let mut random = Scripted::new(&[-1, i32::MIN]);
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");
        let info = partitioner.peek_current_partition_info(&leaders, &mut random);
        assert_eq!(info.partition, 1);
        // One byte reaches the sticky size of 1: the switch draws Integer.MIN_VALUE.
        assert!(partitioner.update_partition_info(1, true, &leaders, &mut random));
        let info = partitioner.peek_current_partition_info(&leaders, &mut random);
        assert_eq!(info.partition, 0);
    }

    /// nextPartition without load statistics indexes the partitions that have a leader:
    /// with partitions 0 and 2 led, draw 1 is the second of them, partition 2. With no
    /// partition led, draw 4 of 3 partitions is partition 1 (4 % 3).
    #[test]
    fn the_uniform_draw_indexes_the_partitions_with_a_leader() {
        let mut random = Scripted::new(&[1, 4]);
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");
        let leaders = [Some(1), None, Some(3)];
        let info = partitioner.peek_current_partition_info(&leaders, &mut random);
        assert_eq!(info.partition, 2);
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");
        let info = partitioner.peek_current_partition_info(&[None, None, None], &mut random);
        assert_eq!(info.partition, 1);
    }

    /// updatePartitionLoadStats on its javadoc's example: queue sizes 0 3 1 make the table
    /// 4 5 8, so draws 0..=3 pick the first partition, 4 the second, 5..=7 the third, and 8
    /// wraps to 0.
    #[test]
    fn the_cumulative_frequency_table_of_kafkas_example() {
        let leaders = [Some(1), Some(2), Some(3)];
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");
        partitioner.update_partition_load_stats(Some(QueueSizes {
            queue_sizes: vec![0, 3, 1],
            partition_ids: vec![0, 1, 2],
            length: 3,
        }));
        assert_eq!(partitioner.load_stats_range_end(), Some(8));
        let mut random = Sequential { next: 0 };
        let mut chosen = Vec::new();
        for _ in 0..10 {
            chosen.push(produce(&mut partitioner, 1, &leaders, &mut random));
        }
        assert_eq!(chosen, [0, 0, 0, 0, 1, 2, 2, 2, 0, 0]);
    }

    /// updatePartitionLoadStats leaves the choice uniform (no statistics) without queue sizes,
    /// with one partition, and with queues all of one size; but a partition left out (length
    /// below the arrays' length) keeps the statistics even when the rest are equal.
    #[test]
    fn load_stats_only_when_they_change_the_choice() {
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");
        let sizes = |queue_sizes: Vec<u32>, length: usize| {
            let partition_ids = (0..count(queue_sizes.len())).collect();
            Some(QueueSizes {
                queue_sizes,
                partition_ids,
                length,
            })
        };
        partitioner.update_partition_load_stats(sizes(vec![2, 2, 2], 3));
        assert_eq!(partitioner.load_stats_range_end(), None);
        partitioner.update_partition_load_stats(sizes(vec![4], 1));
        assert_eq!(partitioner.load_stats_range_end(), None);
        partitioner.update_partition_load_stats(sizes(vec![2, 2, 2], 0));
        assert_eq!(partitioner.load_stats_range_end(), None);
        // Two of three kept, both with 2 batches: frequencies 3 - 2 = 1 each, table 1 2.
        partitioner.update_partition_load_stats(sizes(vec![2, 2, 2], 2));
        assert_eq!(partitioner.load_stats_range_end(), Some(2));
        partitioner.update_partition_load_stats(None);
        assert_eq!(partitioner.load_stats_range_end(), None);
    }

    /// DefaultRecordBatch.RECORD_BATCH_OVERHEAD: a batch's header, 61 bytes (8 base offset,
    /// 4 length, 4 partition leader epoch, 1 magic, 4 CRC, 2 attributes, 4 last offset delta,
    /// 8 base timestamp, 8 max timestamp, 8 producer id, 2 producer epoch, 4 base sequence,
    /// 4 records count).
    const RECORD_BATCH_OVERHEAD: u64 = 61;

    /// A record as the accumulator measures it, uncompressed: its bytes in a batch
    /// (DefaultRecord.sizeInBytes) and the bytes a new batch's buffer is sized for when the
    /// record does not fit `batch.size` (AbstractRecords.estimateSizeInBytesUpperBound:
    /// RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD 21 + the key, value and headers).
    #[derive(Clone, Copy)]
    struct TestRecord {
        size_bytes: u64,
        upper_bound_bytes: u64,
    }

    /// RecordAccumulatorTest's `value`, "value": no key, 5 bytes, no header, at offset and
    /// timestamp delta 0. Body: attributes 1 + offset delta varint(0) 1 + timestamp delta 1 +
    /// null key 1 + value length varint(5) 1 + 5 + header count 1 = 11; with its length
    /// varint(11) 1: 12 bytes. Upper bound 61 + 21 + (1 + 1 + 5 + 1) = 90.
    const VALUE: TestRecord = TestRecord {
        size_bytes: 12,
        upper_bound_bytes: 90,
    };

    /// A value of 1024 zero bytes, no key: body 1 + 1 + 1 + 1 + varint(1024) 2 (zigzag 2048
    /// needs 12 bits) + 1024 + 1 = 1031; with varint(1031) 2 (zigzag 2062): 1033 bytes. Upper
    /// bound 61 + 21 + (1 + 2 + 1024 + 1) = 1110.
    const VALUE_1024: TestRecord = TestRecord {
        size_bytes: 1033,
        upper_bound_bytes: 1110,
    };

    /// A value of 128 zero bytes, no key: body 1 + 1 + 1 + 1 + varint(128) 2 (zigzag 256 needs
    /// 9 bits) + 128 + 1 = 135; with varint(135) 2 (zigzag 270): 137 bytes. Upper bound
    /// 61 + 21 + (1 + 2 + 128 + 1) = 214.
    const VALUE_128: TestRecord = TestRecord {
        size_bytes: 137,
        upper_bound_bytes: 214,
    };

    /// A batch as MemoryRecordsBuilder counts it, uncompressed.
    struct TestBatch {
        /// estimatedBytesWritten: the header and the records.
        size_bytes: u64,
        /// The buffer's size.
        write_limit: u64,
        records: u32,
        /// closeForRecordAppends was called.
        closed: bool,
    }

    impl TestBatch {
        /// MemoryRecordsBuilder.isFull.
        fn is_full(&self) -> bool {
            self.closed || (self.records > 0 && self.write_limit <= self.size_bytes)
        }

        /// MemoryRecordsBuilder.hasRoomFor ("We always allow at least one record").
        fn has_room_for(&self, record: TestRecord) -> bool {
            !self.is_full()
                && (self.records == 0 || self.write_limit >= self.size_bytes + record.size_bytes)
        }
    }

    /// What RecordAccumulator.append does around the partitioner, for the
    /// RecordAccumulatorTest cases below (uncompressed, one topic, records of a few batches'
    /// worth, so each record's size does not depend on its place in the batch). Each
    /// partition's queue is `None` until the first append picks the partition.
    struct TestAccumulator {
        batch_size: u64,
        deques: Vec<Option<Vec<TestBatch>>>,
    }

    impl TestAccumulator {
        fn new(batch_size: u64, partitions: usize) -> Self {
            TestAccumulator {
                batch_size,
                deques: (0..partitions).map(|_| None).collect(),
            }
        }

        /// RecordAccumulator.append for a record to `partition`, or (None,
        /// `RecordMetadata.UNKNOWN_PARTITION`) to the sticky partition: the partition it went
        /// to (what `AppendCallbacks.setPartition` hears last).
        fn append(
            &mut self,
            partitioner: &mut BuiltInPartitioner,
            partition: Option<u32>,
            record: TestRecord,
            leaders: &[Option<BrokerId>],
            random: &mut impl RandomInt,
        ) -> u32 {
            // "Loop to retry in case we encounter partitioner's race conditions."
            loop {
                let (effective, sticky) = match partition {
                    Some(partition) => (partition, false),
                    None => (
                        partitioner
                            .peek_current_partition_info(leaders, random)
                            .partition,
                        true,
                    ),
                };
                let deque = self.deques[effective as usize].get_or_insert_with(Vec::new);

                // Under the queue's lock: the held-back switch, then the last batch.
                if sticky && partitioner.partition_changed(all_batches_full(deque), leaders, random)
                {
                    continue;
                }
                if let Some(appended_bytes) = try_append(deque, record) {
                    if sticky {
                        let enable_switch = all_batches_full(deque);
                        partitioner.update_partition_info(
                            appended_bytes,
                            enable_switch,
                            leaders,
                            random,
                        );
                    }
                    return effective;
                }

                // A buffer is allocated here; then the lock again.
                if sticky && partitioner.partition_changed(all_batches_full(deque), leaders, random)
                {
                    continue;
                }
                let appended_bytes = append_new_batch(deque, record, self.batch_size);
                if sticky {
                    let enable_switch = all_batches_full(deque);
                    partitioner.update_partition_info(
                        appended_bytes,
                        enable_switch,
                        leaders,
                        random,
                    );
                }
                return effective;
            }
        }

        /// Each partition's number of batches, or None without a queue.
        fn deque_sizes(&self) -> Vec<Option<u32>> {
            self.deques
                .iter()
                .map(|deque| deque.as_ref().map(|batches| count(batches.len())))
                .collect()
        }
    }

    /// RecordAccumulator.allBatchesFull: "Only the last batch may be incomplete".
    fn all_batches_full(deque: &[TestBatch]) -> bool {
        deque.last().is_none_or(TestBatch::is_full)
    }

    /// RecordAccumulator.tryAppend: the bytes appended to the last batch, or None (and the
    /// batch closed) when the record does not fit.
    fn try_append(deque: &mut [TestBatch], record: TestRecord) -> Option<u64> {
        let last = deque.last_mut()?;
        if !last.has_room_for(record) {
            last.closed = true;
            return None;
        }
        last.size_bytes += record.size_bytes;
        last.records += 1;
        Some(record.size_bytes)
    }

    /// RecordAccumulator.appendNewBatch: a batch in a buffer of `max(batch.size, the record's
    /// upper bound)` bytes; the bytes appended are the new batch's estimated size.
    fn append_new_batch(deque: &mut Vec<TestBatch>, record: TestRecord, batch_size: u64) -> u64 {
        // "Somebody else found us a batch": not in one node, but Kafka tries.
        if let Some(appended_bytes) = try_append(deque, record) {
            return appended_bytes;
        }
        let batch = TestBatch {
            size_bytes: RECORD_BATCH_OVERHEAD + record.size_bytes,
            write_limit: batch_size.max(record.upper_bound_bytes),
            records: 1,
            closed: false,
        };
        let appended_bytes = batch.size_bytes;
        deque.push(batch);
        appended_bytes
    }

    /// RecordAccumulatorTest's cluster: partitions 0 and 1 led by node 0, partition 2 by
    /// node 1.
    const ACCUMULATOR_LEADERS: [Option<BrokerId>; 3] = [Some(0), Some(0), Some(1)];

    /// RecordAccumulatorTest.testUniformBuiltInPartitioner.
    #[test]
    fn test_uniform_built_in_partitioner() {
        let mut random = Sequential { next: 0 };
        // batch.size 1024, "note that this is also a "sticky" limit for the partitioner".
        let batch_size = 1024;
        let mut partitioner = BuiltInPartitioner::new(batch_size).expect("a valid size");
        let mut accum = TestAccumulator::new(batch_size, 3);
        let leaders = ACCUMULATOR_LEADERS;

        // Produce small record, we should switch to first partition.
        // (A new batch: 61 + 12 = 73 bytes produced.)
        let partition = accum.append(&mut partitioner, None, VALUE, &leaders, &mut random);
        assert_eq!(partition, 0);
        assert_eq!(random.next, 1);

        // Produce large record, we should exceed "sticky" limit, but produce to this partition
        // as we try to switch after the "sticky" limit is exceeded. The switch is disabled
        // because of incomplete batch.
        // (73 + 1033 > 1024 closes the first batch; a new one of 61 + 1033 = 1094 bytes in
        // a 1110-byte buffer is not full: 73 + 1094 = 1167 produced, past 1024, below 2048.)
        let partition = accum.append(&mut partitioner, None, VALUE_1024, &leaders, &mut random);
        assert_eq!(partition, 0);
        assert_eq!(random.next, 1);

        // Produce large record, we should switch to next partition as we complete previous
        // batch and exceeded sticky limit.
        let partition = accum.append(&mut partitioner, None, VALUE_1024, &leaders, &mut random);
        assert_eq!(partition, 1);
        assert_eq!(random.next, 2);

        // Produce large record, we should switch to next partition as we complete previous
        // batch and exceeded sticky limit.
        let partition = accum.append(&mut partitioner, None, VALUE_1024, &leaders, &mut random);
        assert_eq!(partition, 2);
        assert_eq!(random.next, 3);

        // Produce large record, we should switch to next partition as we complete previous
        // batch and exceeded sticky limit.
        let partition = accum.append(&mut partitioner, None, VALUE_1024, &leaders, &mut random);
        assert_eq!(partition, 0);
        assert_eq!(random.next, 4);
    }

    /// RecordAccumulatorTest.testAdaptiveBuiltInPartitioner. MockTime's clock is at 1000 ms
    /// here (Kafka's starts at the wall clock; only differences count).
    #[test]
    fn test_adaptive_built_in_partitioner() {
        // Mock random number generator with just sequential integer.
        let mut random = Sequential { next: 0 };
        // Create accumulator with partitioner config to enable adaptive partitioning.
        let config = PartitionerConfig {
            batch_size: 128,
            adaptive_partitioning_enable: true,
            availability_timeout_ms: 100,
            ignore_keys: false,
        };
        let mut partitioner =
            BuiltInPartitioner::new(config.sticky_batch_size()).expect("a valid size");
        let mut accum = TestAccumulator::new(config.batch_size, 3);
        let mut node_stats = NodeStats::default();
        let leaders = ACCUMULATOR_LEADERS;
        let now_ms = 1000;

        let queue_sizes = [1, 7, 2];
        let mut expected_frequencies = [0u32; 3];
        for (i, &queue_size) in queue_sizes.iter().enumerate() {
            // 8 is max(queueSizes) + 1.
            expected_frequencies[i] = 8 - queue_size;
            for _ in 0..queue_size {
                // Add large records to each partition, so that each record creates a batch.
                // (61 + 137 = 198 bytes in a 214-byte buffer: the next 137 do not fit.)
                accum.append(
                    &mut partitioner,
                    Some(count(i)),
                    VALUE_128,
                    &leaders,
                    &mut random,
                );
            }
            assert_eq!(accum.deque_sizes()[i], Some(queue_size));
        }

        // Let the accumulator generate the probability tables (`accum.ready`: partitionReady).
        partitioner.update_partition_load_stats(partition_load_queue_sizes(
            &accum.deque_sizes(),
            &leaders,
            &node_stats,
            &config,
        ));
        // (7 + 1 + 6, worked by hand from the frequencies.)
        assert_eq!(partitioner.load_stats_range_end(), Some(14));

        // Prime built-in partitioner so that it'd switch on every record, as switching only
        // happens after the "sticky" limit is exceeded. (198 bytes produced, past 128; the new
        // batch is incomplete, so the switch waits for the next record.)
        accum.append(&mut partitioner, None, VALUE_128, &leaders, &mut random);

        // Issue a certain number of partition calls to validate that the partitions would be
        // distributed with frequencies that are reciprocal to the queue sizes. The number of
        // iterations is defined by the last element of the cumulative frequency table which
        // is the sum of all frequencies. We do 2 cycles, just so it's more than 1.
        let number_of_cycles = 2;
        let number_of_iterations =
            partitioner.load_stats_range_end().expect("load stats") * number_of_cycles;
        let mut frequencies = [0u32; 3];
        for _ in 0..number_of_iterations {
            let partition = accum.append(&mut partitioner, None, VALUE_128, &leaders, &mut random);
            frequencies[partition as usize] += 1;
        }

        // Verify that frequencies are reciprocal of queue sizes.
        for (i, frequency) in frequencies.iter().enumerate() {
            assert_eq!(
                *frequency,
                expected_frequencies[i] * number_of_cycles,
                "Partition {i} was chosen {frequency} times"
            );
        }

        // Test that partitions residing on high-latency nodes don't get switched to.
        node_stats.update_node_latency_stats(0, now_ms - 200, true, config.availability_timeout_ms);
        node_stats.update_node_latency_stats(0, now_ms, false, config.availability_timeout_ms);
        partitioner.update_partition_load_stats(partition_load_queue_sizes(
            &accum.deque_sizes(),
            &leaders,
            &node_stats,
            &config,
        ));

        // Do one append, because partition gets switched after append.
        accum.append(&mut partitioner, None, VALUE_128, &leaders, &mut random);

        for _ in 0..10 {
            let partition = accum.append(&mut partitioner, None, VALUE_128, &leaders, &mut random);
            assert_eq!(partition, 2);
        }
    }

    /// RecordAccumulator.updateNodeLatencyStats: the first call sets both times to now; a
    /// drain moves both, a ready without a drain only the ready time; with the timeout at 0
    /// nothing is kept.
    #[test]
    fn node_latency_stats_move_as_the_sender_reports() {
        let mut stats = NodeStats::default();
        stats.update_node_latency_stats(1, 500, false, 0);
        assert_eq!(stats.get(1), None);

        stats.update_node_latency_stats(1, 500, false, 100);
        let both_500 = NodeLatencyStats {
            ready_time_ms: 500,
            drain_time_ms: 500,
        };
        assert_eq!(stats.get(1), Some(&both_500));
        stats.update_node_latency_stats(1, 650, false, 100);
        assert_eq!(
            stats.get(1),
            Some(&NodeLatencyStats {
                ready_time_ms: 650,
                drain_time_ms: 500
            })
        );
        stats.update_node_latency_stats(1, 700, true, 100);
        assert_eq!(
            stats.get(1),
            Some(&NodeLatencyStats {
                ready_time_ms: 700,
                drain_time_ms: 700
            })
        );
        assert_eq!(stats.get(2), None);
    }

    /// partitionReady's queue sizes: none until every partition has a queue, none with
    /// adaptive partitioning off; a partition without a leader takes no entry (but counts in
    /// the arrays' length); an empty queue's entry keeps the size it had.
    #[test]
    fn queue_sizes_for_the_load_stats() {
        let config = PartitionerConfig::default();
        let stats = NodeStats::default();
        let leaders = [Some(1), None, Some(2), Some(3)];
        let some_queues = [Some(2), None, Some(1), Some(4)];
        assert_eq!(
            partition_load_queue_sizes(&some_queues, &leaders, &stats, &config),
            None
        );
        let all_queues = [Some(2), Some(5), Some(0), Some(4)];
        let off = PartitionerConfig {
            adaptive_partitioning_enable: false,
            ..config
        };
        assert_eq!(
            partition_load_queue_sizes(&all_queues, &leaders, &stats, &off),
            None
        );
        // Partition 0 takes entry 0 (2 batches); partition 1 has no leader; partition 2
        // takes entry 1 and its empty queue leaves it 0; partition 3 takes entry 2 (4).
        assert_eq!(
            partition_load_queue_sizes(&all_queues, &leaders, &stats, &config),
            Some(QueueSizes {
                queue_sizes: vec![2, 0, 4, 0],
                partition_ids: vec![0, 2, 3, 0],
                length: 3,
            })
        );
    }

    /// partitionReady with `partitioner.availability.timeout.ms`: a partition whose leader has
    /// waited longer than the timeout gives its entry back, and the next partition overwrites
    /// it; a leader that waited exactly the timeout stays. An empty queue after a partition
    /// left out inherits that partition's size in its entry, as Kafka's arrays do.
    #[test]
    fn partitions_on_a_slow_leader_are_left_out_of_the_load_stats() {
        let config = PartitionerConfig {
            availability_timeout_ms: 100,
            ..PartitionerConfig::default()
        };
        let mut stats = NodeStats::default();
        // Broker 1 has waited 150 ms, broker 2 100 ms.
        stats.update_node_latency_stats(1, 0, true, 100);
        stats.update_node_latency_stats(1, 150, false, 100);
        stats.update_node_latency_stats(2, 0, true, 100);
        stats.update_node_latency_stats(2, 100, false, 100);
        let leaders = [Some(1), Some(2), Some(1), Some(3)];
        let queues = [Some(3), Some(6), Some(5), Some(0)];
        // Partition 0 (broker 1): entry 0 = 3, given back. Partition 1 (broker 2, 100 ms is
        // not more than 100): entry 0 = 6, kept. Partition 2 (broker 1): entry 1 = 5, given
        // back. Partition 3 (broker 3, empty queue): entry 1, still 5.
        let sizes = partition_load_queue_sizes(&queues, &leaders, &stats, &config);
        assert_eq!(
            sizes,
            Some(QueueSizes {
                queue_sizes: vec![6, 5, 0, 0],
                partition_ids: vec![1, 3, 0, 0],
                length: 2,
            })
        );
        // The table: max + 1 = 7; 7 - 6 = 1, then 7 - 5 + 1 = 3. Draws 0 pick partition 1,
        // 1 and 2 partition 3.
        let mut partitioner = BuiltInPartitioner::new(1).expect("a valid size");
        partitioner.update_partition_load_stats(sizes);
        assert_eq!(partitioner.load_stats_range_end(), Some(3));
        let mut random = Sequential { next: 0 };
        let mut chosen = Vec::new();
        for _ in 0..3 {
            chosen.push(produce(&mut partitioner, 1, &leaders, &mut random));
        }
        assert_eq!(chosen, [1, 3, 3]);
    }

    /// KafkaProducerTest.testMetadataWithPartitionOutOfRange: a record for partition 2 is sent
    /// once the metadata shows three partitions. (Kafka's test counts the metadata requests
    /// that wait for it; the engine's metadata is always current.)
    #[test]
    fn test_metadata_with_partition_out_of_range() {
        assert_eq!(partition(Some(2), None, 3, false), Ok(Some(2)));
    }

    /// KafkaProducerTest.testMetadataTimeoutWithPartitionOutOfRange: a record for partition 2
    /// of a topic with one partition fails (Kafka: TimeoutException after max.block.ms).
    #[test]
    fn test_metadata_timeout_with_partition_out_of_range() {
        let error = partition(Some(2), None, 1, false).expect_err("no partition 2");
        assert_eq!(
            error,
            InvalidPartition {
                partition: 2,
                partition_count: 1
            }
        );
    }

    /// KafkaProducer.partition's order: the record's partition, then its key's (UtilsTest's
    /// murmur2("foobar") is -790332482, toPositive 1357151166, 6 of 10, see hashing.rs), then
    /// none; `partitioner.ignore.keys` makes a keyed record keyless.
    #[test]
    fn an_explicit_partition_comes_before_the_key_and_the_key_before_the_sticky_partition() {
        let foobar: &[u8] = b"foobar";
        assert_eq!(partition(Some(3), Some(foobar), 10, false), Ok(Some(3)));
        assert_eq!(partition(None, Some(foobar), 10, false), Ok(Some(6)));
        assert_eq!(partition(None, Some(foobar), 10, true), Ok(None));
        assert_eq!(partition(None, None, 10, false), Ok(None));
        // An empty key is a key (`serializedKey != null`): murmur2 of no bytes is
        // 275646681 (hashing.rs), 1 of 10.
        assert_eq!(partition(None, Some(&[]), 10, false), Ok(Some(1)));
        // The explicit partition is checked even when a key is present.
        assert!(partition(Some(10), Some(foobar), 10, false).is_err());
    }

    /// The engine's generator as `ThreadLocalRandom`: its value's high 32 bits, as an int.
    /// SplitMix64 seeded with 1234567 first gives 6457827717110365317 (rng.rs), whose high
    /// 32 bits are 1503580183 (6457827717110365317 = 1503580183 × 4294967296 + 4211670149,
    /// by long division), below 2^31, so a positive int.
    #[test]
    fn the_seeded_generator_draws_java_ints() {
        let mut rng = Rng::new(1_234_567);
        assert_eq!(rng.next_int(), 1_503_580_183);
    }

    /// Runs [`append_records`] for `n` keyless records of `size`-byte values: each batch's
    /// partition and record count.
    fn appended(
        partitioner: &mut BuiltInPartitioner,
        n: usize,
        size: u32,
        batch_size: u64,
        one_by_one: bool,
        random: &mut impl RandomInt,
    ) -> Vec<(u32, usize)> {
        let shape = crate::record::RecordShape {
            key: None,
            size: Some(size),
        };
        let values = (0..n).map(|i| format!("v{i}")).collect();
        let leaders = [Some(1), Some(2), Some(3)];
        append_records(
            partitioner,
            None,
            values,
            &shape,
            batch_size,
            one_by_one,
            &leaders,
            random,
        )
        .into_iter()
        .map(|(p, values)| (p, values.len()))
        .collect()
    }

    /// batch.size 16384 and 1024-byte values (1033 bytes a record, below offset delta 64):
    /// a batch takes 15 (61 + 15 × 1033 = 15556; a 16th would make 16589). Appended at once,
    /// the 16th closes the first batch, but 15556 produced bytes are below 16384, so it starts
    /// a second batch on the same partition (16650 produced; the new batch is not full, so no
    /// switch). The 31st closes the second batch with 31112 produced: the switch
    /// (`producedBytes >= stickyBatchSize && enableSwitch`) draws the next partition, and the
    /// record goes there. Sequential draws 0, 1: partitions 0 then 1 of three with leaders.
    #[test]
    fn keyless_records_switch_partition_once_a_full_batch_passes_batch_size() {
        let mut p = BuiltInPartitioner::new(16_384).expect("valid");
        let mut random = Sequential { next: 0 };
        assert_eq!(
            appended(&mut p, 31, 1024, 16_384, false, &mut random),
            [(0, 15), (0, 15), (1, 1)]
        );
        assert_eq!(random.next, 2);
    }

    /// One by one (`send().get()`): each record's batch has left before the next record
    /// comes, so the queue is empty (all batches full) at each append: the switch comes at
    /// the first record after 16384 bytes, 15 × (61 + 1033) = 16410. Records 1..=15 go to
    /// partition 0, 16..=30 to 1, 31 to 2.
    #[test]
    fn one_by_one_the_switch_comes_after_batch_size_bytes_of_batches() {
        let mut p = BuiltInPartitioner::new(16_384).expect("valid");
        let mut random = Sequential { next: 0 };
        let batches = appended(&mut p, 31, 1024, 16_384, true, &mut random);
        assert_eq!(batches.len(), 31, "a batch per record");
        let partitions: Vec<u32> = batches.iter().map(|b| b.0).collect();
        let mut expected = vec![0; 15];
        expected.extend([1; 15]);
        expected.push(2);
        assert_eq!(partitions, expected);
    }

    /// RecordAccumulatorTest.testUniformBuiltInPartitioner's large records: batch.size 1024
    /// and 1024-byte values (a batch of one is 61 + 1033 = 1094 bytes in a buffer of
    /// max(1024, 61 + 21 + 1 + 2 + 1024 + 1 = 1110)): each next record does not fit, closes
    /// the batch with more than 1024 bytes produced, and switches: partitions 0, 1, 2, 0.
    #[test]
    fn records_larger_than_batch_size_each_take_the_next_partition() {
        let mut p = BuiltInPartitioner::new(1024).expect("valid");
        let mut random = Sequential { next: 0 };
        assert_eq!(
            appended(&mut p, 4, 1024, 1024, false, &mut random),
            [(0, 1), (1, 1), (2, 1), (0, 1)]
        );
    }

    /// A partition named (or a key's): no draw, batches split at batch.size only.
    #[test]
    fn a_fixed_partition_draws_nothing_and_splits_batches_at_batch_size() {
        let mut p = BuiltInPartitioner::new(16_384).expect("valid");
        let mut random = Scripted::new(&[]);
        let shape = crate::record::RecordShape {
            key: Some("k".into()),
            size: Some(1024),
        };
        // With a 1-byte key a record is 1 + 1 + 1 + (1 + 1) + (2 + 1024) + 1 = 1032, + 2 =
        // 1034 bytes: 15 make 61 + 15510 = 15571, a 16th 16605 > 16384.
        let values: Vec<String> = (0..16).map(|i| format!("v{i}")).collect();
        let batches = append_records(
            &mut p,
            Some(0),
            values,
            &shape,
            16_384,
            false,
            &[Some(1)],
            &mut random,
        );
        let sizes: Vec<(u32, usize)> = batches.iter().map(|(p, v)| (*p, v.len())).collect();
        assert_eq!(sizes, [(0, 15), (0, 1)]);
    }
}
