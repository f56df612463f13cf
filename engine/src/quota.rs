//! The replication throttle (KIP-73): ReplicationQuotaManager (core/src/main/scala/kafka/
//! server/ReplicationQuotaManager.scala), one on each broker for the leader side and one for
//! the follower side, with the rate it measures: a `SimpleRate` over a `WindowedSum`
//! (clients' org.apache.kafka.common.metrics.stats) of `replication.quota.window.num` (11)
//! samples of `replication.quota.window.size.seconds` (1 s), in integer bytes and
//! milliseconds. A rate is never a float here: `total / (window_ms / 1000) > bound` is
//! decided as `total × 1000 > bound × window_ms` (Kafka divides in doubles: the two agree
//! but where a double's rounding decides a tie).
//!
//! The configs come from the metadata (`MetadataImage::throttle_rates` and
//! `throttled_replicas`, the ConfigRecords kafka-reassign-partitions.sh `--throttle` writes):
//! BrokerConfigHandler.processConfigChanges gives each manager its bound (`updateQuota`), and
//! TopicConfigHandler.processConfigChanges its throttled partitions (`markThrottled` with
//! ConfigHandler.parseThrottledPartitions, `removeThrottle`). The leader side
//! (ReplicaManager.shouldLeaderThrottle, DelayedFetch, KafkaApis.sizeOfThrottledPartitions) is
//! in `broker.rs`, the follower side (RemoteLeaderEndPoint.shouldFollowerThrottle,
//! ReplicaFetcherThread.processPartitionData) in `fetcher.rs`.

use crate::types::{BrokerId, TimeMs, Tp};
use crate::vec_map::VecMap;

/// `replication.quota.window.num` (QuotaConfig.NUM_REPLICATION_QUOTA_SAMPLES_DEFAULT).
pub const QUOTA_WINDOW_NUM: usize = 11;
/// `replication.quota.window.size.seconds` (QuotaConfig.QUOTA_WINDOW_SIZE_SECONDS_DEFAULT),
/// in ms.
pub const QUOTA_WINDOW_MS: u64 = 1_000;

/// SampledStat.Sample of a WindowedSum: its start, its last event and the bytes recorded in
/// it. (`eventCount` only serves `isComplete` with `eventWindow`, Long.MAX_VALUE here.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sample {
    start_ms: TimeMs,
    last_event_ms: TimeMs,
    bytes: u64,
}

impl Sample {
    /// `new Sample(initialValue, now)` and `Sample.reset(now)`.
    fn new(now: TimeMs) -> Sample {
        Sample {
            start_ms: now,
            last_event_ms: now,
            bytes: 0,
        }
    }
}

/// A SimpleRate over a WindowedSum with the replication quota's MetricConfig. Empty until its
/// sensor is first used, as `sensorAccess.getOrCreate` creates it. (A sensor idle for
/// INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS, an hour, is removed and made again at its next
/// use; by then every sample is older than the 11 s window and purged, so measuring it gives
/// what a new one gives, and the engine keeps it.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampledRate {
    /// The ring: `len` samples made so far (at most `samples + 1`).
    samples: [Sample; QUOTA_WINDOW_NUM + 1],
    len: usize,
    current: usize,
}

impl SampledRate {
    /// SampledStat.current: the current sample, the first made at `now` if there is none.
    fn current(&mut self, now: TimeMs) -> &mut Sample {
        if self.len == 0 {
            self.samples[0] = Sample::new(now);
            self.len = 1;
        }
        &mut self.samples[self.current]
    }

    /// SampledStat.record: into the current sample, or the next one once the current is
    /// complete (`timeMs - startTimeMs >= timeWindowMs`); the ring holds `samples + 1` ("one
    /// extra placeholder for overlapping sample"), reused by `reset`.
    pub fn record(&mut self, bytes: u64, now: TimeMs) {
        if now.saturating_sub(self.current(now).start_ms) >= QUOTA_WINDOW_MS {
            // SampledStat.advance.
            // A new sample past the last one made, or the oldest reused (`reset`).
            self.current = (self.current + 1) % (QUOTA_WINDOW_NUM + 1);
            self.samples[self.current] = Sample::new(now);
            self.len = self.len.max(self.current + 1);
        }
        let sample = &mut self.samples[self.current];
        sample.bytes += bytes;
        sample.last_event_ms = now;
    }

    /// Rate.measure with SimpleRate.windowSize: the bytes of every sample (WindowedSum.combine,
    /// after purgeObsoleteSamples resets each sample with no event in the last
    /// `samples × timeWindowMs`), and the window they are divided by, in ms:
    /// `max(now − oldest sample's start, timeWindowMs)` (SampledStat.oldest makes a sample at
    /// `now` if there is none). The rate is `bytes / (window / 1000)` bytes per second.
    pub fn measure(&mut self, now: TimeMs) -> (u64, u64) {
        let expire_ms = QUOTA_WINDOW_NUM as u64 * QUOTA_WINDOW_MS;
        for s in &mut self.samples[..self.len] {
            if now.saturating_sub(s.last_event_ms) >= expire_ms {
                *s = Sample::new(now);
            }
        }
        let _ = self.current(now);
        let samples = &self.samples[..self.len];
        let bytes = samples.iter().map(|s| s.bytes).sum();
        let oldest = samples.iter().map(|s| s.start_ms).min().unwrap_or(now);
        (bytes, now.saturating_sub(oldest).max(QUOTA_WINDOW_MS))
    }

    /// The `byte-rate` metric's value at `now` (KafkaMetric.metricValue, which is
    /// Rate.measure) in whole bytes per second, rounded down: `bytes × 1000 / window_ms` of
    /// [`SampledRate::measure`], where Kafka divides in doubles. Measured on a copy: reading a
    /// metric changes nothing here (Kafka's read purges the samples it finds obsolete, which
    /// the next measure would purge too). A sensor not made yet reads 0 (what a new one
    /// measures: nothing over one window), where Kafka has no such metric yet.
    pub fn byte_rate(&self, now: TimeMs) -> u64 {
        let mut copy = *self;
        let (bytes, window_ms) = copy.measure(now);
        // window_ms ≥ QUOTA_WINDOW_MS > 0; u128: no product of u64s overflows.
        (u128::from(bytes) * 1_000 / u128::from(window_ms)) as u64
    }
}

/// ReplicationQuotaManager: the bound, the throttled partitions, the rate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicationQuota {
    /// `leader.replication.throttled.rate` or `follower.replication.throttled.rate` of this
    /// broker, bytes/s (`updateQuota(upperBound(rate))`); None: the default, Long.MAX_VALUE.
    pub bound: Option<u64>,
    /// `throttledPartitions`: the partitions throttled on this broker, a topic's every one
    /// (`AllReplicas`, the `*` wildcard) as partition [`ALL_PARTITIONS`].
    pub throttled: Vec<Tp>,
    pub rate: SampledRate,
}

impl ReplicationQuota {
    /// isThrottled: `tp`'s topic is marked, with every partition or with `tp`'s.
    pub fn is_throttled(&self, tp: Tp) -> bool {
        self.throttled.iter().any(|t| {
            t.topic == tp.topic && (t.partition == ALL_PARTITIONS || t.partition == tp.partition)
        })
    }

    /// isQuotaExceeded: Sensor.checkQuotas, `Quota.acceptable` (`value <= bound`) false for
    /// the measured rate.
    pub fn is_quota_exceeded(&mut self, now: TimeMs) -> bool {
        let (bytes, window_ms) = self.rate.measure(now);
        // Saturating: a product past u64::MAX is only ever a bound's (a rate above 1.5 PB/s
        // over 12 s), which nothing reaches.
        self.bound
            .is_some_and(|b| bytes.saturating_mul(1_000) > b.saturating_mul(window_ms))
    }

    /// record: the bytes go into the rate whether or not the quota is exceeded.
    pub fn record(&mut self, bytes: u64, now: TimeMs) {
        self.rate.record(bytes, now);
    }

    /// The configs of `image` for broker `id`: the bound (BrokerConfigHandler: the broker's
    /// rate, else the default) and each topic's throttled replicas (TopicConfigHandler
    /// .updateThrottledList: a non-empty value is `markThrottled` with the partitions
    /// parseThrottledPartitions gives, anything else `removeThrottle`). `leader` picks the
    /// `leader.*` configs, else the `follower.*` ones. The rate is kept.
    pub fn configure(
        &mut self,
        id: BrokerId,
        rates: &VecMap<BrokerId, (u64, u64)>,
        replicas: &VecMap<u16, (String, String)>,
        leader: bool,
    ) {
        self.bound = rates.get(&id).map(|r| if leader { r.0 } else { r.1 });
        // An empty value marks no partition, as removeThrottle leaves none.
        self.throttled = Vec::new();
        for (topic, lists) in replicas {
            let value = if leader { &lists.0 } else { &lists.1 };
            for partition in parse_throttled_partitions(value, id) {
                self.throttled.push(Tp {
                    topic: *topic,
                    partition,
                });
            }
        }
    }
}

/// The partition that stands for every partition of a topic (`*`).
pub const ALL_PARTITIONS: u16 = u16::MAX;

/// ConfigHandler.parseThrottledPartitions: `*` is every partition ([`ALL_PARTITIONS`]);
/// otherwise the partitions of the `partitionId:brokerId` items whose broker is `broker`. (The
/// values are the tool's, which ThrottledReplicaListValidator accepts; an item that does not
/// parse is skipped.)
pub fn parse_throttled_partitions(value: &str, broker: BrokerId) -> Vec<u16> {
    let value = value.trim();
    if value == "*" {
        return vec![ALL_PARTITIONS];
    }
    let mut out = Vec::new();
    for item in value.split(',') {
        let mut parts = item.trim().split(':');
        if let (Some(p), Some(b)) = (parts.next(), parts.next()) {
            // Both parsed as u32 (one parser in the wasm); a partition above u16 is none here.
            let id = |s: &str| s.trim().parse::<u32>().ok();
            if let (Some(p), true) = (id(p), id(b) == Some(broker)) {
                out.extend(u16::try_from(p).ok());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(topic: u16, partition: u16) -> Tp {
        Tp { topic, partition }
    }

    /// ReplicationQuotaManagerTest.shouldThrottleOnlyDefinedReplicas:
    /// `markThrottled("topic1", Seq(1, 2, 3))`, partitions 1..3 throttled, 4 not; here through
    /// the config value as the broker parses it (broker 7's items only).
    #[test]
    fn should_throttle_only_defined_replicas() {
        let mut q = ReplicationQuota::default();
        let mut replicas = VecMap::new();
        replicas.insert(0, ("1:7,2:7,3:7,4:8".to_string(), String::new()));
        q.configure(7, &VecMap::new(), &replicas, true);
        for p in 1..=3 {
            assert!(q.is_throttled(tp(0, p)), "partition {p}");
        }
        assert!(!q.is_throttled(tp(0, 4)), "4 is throttled on broker 8 only");
        assert!(!q.is_throttled(tp(1, 1)), "another topic");
        // The follower list is empty: removeThrottle.
        q.configure(7, &VecMap::new(), &replicas, false);
        assert!(!q.is_throttled(tp(0, 1)));
        assert_eq!(q.bound, None);
    }

    /// ReplicationQuotaManagerTest.shouldSupportWildcardThrottledReplicas.
    #[test]
    fn should_support_wildcard_throttled_replicas() {
        let mut q = ReplicationQuota::default();
        let mut replicas = VecMap::new();
        replicas.insert(3, ("*".to_string(), "*".to_string()));
        let mut rates = VecMap::new();
        rates.insert(2, (100, 200));
        q.configure(2, &rates, &replicas, false);
        assert!(q.is_throttled(tp(3, 0)));
        assert!(q.is_throttled(tp(3, 9)));
        assert!(!q.is_throttled(tp(4, 0)));
        assert_eq!(q.bound, Some(200));
        assert_eq!(
            parse_throttled_partitions(" 0:1 , 10:1,2:5", 1),
            vec![0, 10]
        );
        assert!(parse_throttled_partitions("", 1).is_empty());
    }

    /// The bytes over the window, as a fraction of a second: `rate(metrics)` of the Kafka test.
    fn rate(q: &mut ReplicationQuota, now: TimeMs) -> (u64, u64) {
        q.rate.measure(now)
    }

    /// ReplicationQuotaManagerTest.shouldExceedQuotaThenReturnBackBelowBoundAsTimePasses,
    /// transcribed: its config has 10 samples (`new ReplicationQuotaManagerConfig(10, 1)`), the
    /// engine's 11; no sample here is older than 10 s, so the numbers are the test's.
    #[test]
    fn should_exceed_quota_then_return_back_below_bound_as_time_passes() {
        let mut q = ReplicationQuota {
            bound: Some(100),
            ..Default::default()
        };
        let t0 = 5_000;
        // "Quota should not be broken when we start" (the sensor, and its first sample, made).
        assert!(!q.is_quota_exceeded(t0));
        // "First window is fixed, so we'll skip it"; then half a window.
        let mut now = t0 + 1_500;
        q.record(1, now);
        assert!(!q.is_quota_exceeded(now));
        q.record(149, now); // 150 B, 1.5 s
        assert!(!q.is_quota_exceeded(now));
        q.record(1, now); // 151 B, 1.5 s
        assert_eq!(rate(&mut q, now), (151, 1_500));
        assert!(q.is_quota_exceeded(now));
        now += 500; // 151 B, 2 s
        assert!(!q.is_quota_exceeded(now));
        assert_eq!(rate(&mut q, now), (151, 2_000));
        now += 500;
        q.record(99, now); // 250 B, 2.5 s: exactly the bound, acceptable
        assert_eq!(rate(&mut q, now), (250, 2_500));
        assert!(!q.is_quota_exceeded(now));
        q.record(1, now);
        assert!(q.is_quota_exceeded(now));
        assert_eq!(rate(&mut q, now), (251, 2_500));
        now += 2_000; // "251d / 4.5"
        assert!(!q.is_quota_exceeded(now));
        assert_eq!(rate(&mut q, now), (251, 4_500));
    }

    /// The `byte-rate` metric reads the measure as whole bytes/s, rounded down, and leaves the
    /// samples as they were (a later purge and record see what they would have seen).
    #[test]
    fn the_byte_rate_is_the_measure_in_whole_bytes_per_second() {
        let mut q = ReplicationQuota::default();
        assert_eq!(q.rate.byte_rate(5_000), 0, "no sensor yet");
        q.record(151, 6_500);
        // 151 B over max(6.5 s − 6.5 s, 1 s): 151 B/s.
        assert_eq!(q.rate.byte_rate(6_500), 151);
        // 151 B over 1.5 s is 100.67 B/s: 100.
        assert_eq!(q.rate.byte_rate(8_000), 100);
        let before = q.rate;
        // 30 s later the sample is obsolete: 0, and the copy's purge left the samples alone.
        assert_eq!(q.rate.byte_rate(38_000), 0);
        assert_eq!(q.rate, before);
        assert_eq!(rate(&mut q, 8_000), (151, 1_500));
    }

    /// SampledStat's ring and purge: a sample with no event for 11 windows is reset to `now`,
    /// so after a long pause the rate starts afresh over one window; no bound, never exceeded.
    #[test]
    fn old_samples_are_purged_and_no_bound_is_never_exceeded() {
        let mut q = ReplicationQuota::default();
        for s in 0..30u64 {
            q.record(1_000, s * 1_000);
        }
        // 12 samples in the ring (11 + the overlapping one): the last 12 seconds' bytes.
        assert_eq!(q.rate.len, QUOTA_WINDOW_NUM + 1);
        // At 29.5 s the sample of 18 s (last event 11.5 s ago) is purged: 19..29 s remain.
        assert_eq!(rate(&mut q, 29_500), (11_000, 10_500));
        assert!(!q.is_quota_exceeded(29_500));
        // 40 s later every sample is purged: nothing over one window.
        assert_eq!(rate(&mut q, 70_000), (0, 1_000));
        q.bound = Some(0);
        assert!(
            !q.is_quota_exceeded(70_000),
            "0 bytes is within a bound of 0"
        );
        q.record(1, 70_000);
        assert!(q.is_quota_exceeded(70_000));
    }
}
