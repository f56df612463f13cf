//! The follower side: ReplicaFetcherManager, ReplicaFetcherThread and AbstractFetcherThread.
//!
//! A broker runs `num.replica.fetchers` fetcher threads per leader it follows; a partition
//! goes to thread `AbstractFetcherManager.getFetcherId` of its leader
//! (`ReplicaFetcherThread-{fetcherId}-{leaderId}`). A thread has one Fetch in flight, carrying
//! every partition of the thread that is ready (not failed, not backing off); the response's
//! records are appended as the leader wrote them; a follower's HW is min(leader HW, own LEO);
//! a diverging epoch truncates the log (truncationOffset). A request that fails (no answer
//! within `replica.socket.timeout.ms`, a reset connection) backs off every partition in it
//! (`handlePartitionsWithErrors` → `delayPartitions`); a partition's own error backs off
//! that partition only.
//!
//! The [`ReplicaFetcher`] is the broker's ReplicaFetcherManager: it keeps the threads, the
//! counter their fetch ids and timer generations come from, and drives each follower's
//! [`Partition`] (its log and [`FollowerState`]), which the broker passes in with the
//! [`Host`] it runs on. Which thread a partition belongs to is not stored: it follows from
//! the partition's leader and its fetcher id.

use crate::effect::{BrokerTimer, Ctx, Observation};
use crate::event::{Event, FetcherRemovedReason, TruncationReason};
use crate::network::{FetchPartition, FetchPartitionData, Payload};
use crate::partition::{Host, Partition, Role};
use crate::snapshot::TruncationRecord;
use crate::types::{BrokerId, ErrorCode, Node, TimeMs, Tp};
use crate::vec_map::VecMap;

/// A fetcher thread: (leader, fetcher id).
pub(crate) type ThreadKey = (BrokerId, u32);

/// One ReplicaFetcherThread's state across its partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetcherThread {
    /// The Fetch in flight (its fetch id), if any: the thread waits for its answer.
    pub in_flight: Option<u64>,
    /// Guards SendFetch timers: only the newest generation sends.
    pub generation: u64,
}

/// A broker's replica fetchers (ReplicaFetcherManager): the threads, and what it keeps across
/// the partitions it follows and across leaders.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaFetcher {
    /// Counter for fetch ids and timer generations (never reset, not even by a restart, so
    /// an id is never reused).
    pub fetch_generation: u64,
    /// Extra time each fetch takes on this broker (a slow disk or a busy machine): the next
    /// fetch after a response waits this long.
    pub slow_ms: u64,
    /// The fetcher threads by (leader, fetcher id) (`fetcherThreadMap`); a thread lives with
    /// its process.
    pub threads: VecMap<ThreadKey, FetcherThread>,
    /// QuotaManagers.follower, which every ReplicaFetcherThread shares (`quota.rs`).
    pub quota: crate::quota::ReplicationQuota,
}

/// AbstractFetcherThread.getOffsetTruncationState for a diverging epoch from the leader.
/// `follower_end_offset_for` is the follower's LeaderEpochFileCache.endOffsetFor for the
/// leader's epoch, and `fetch_offset` the offset the follower fetched from (its LEO).
/// Returns (offset to truncate to, whether truncation is complete).
pub fn truncation_offset(
    leader_epoch: i32,
    leader_end_offset: i64,
    follower_end_offset_for: (i32, i64),
    fetch_offset: u64,
) -> (u64, bool) {
    if leader_end_offset == crate::log::UNDEFINED_EPOCH_OFFSET {
        // "Based on replica's leader epoch, leader replied with an unknown offset [...] The
        // initial fetch offset will be used for truncation."
        return (fetch_offset, true);
    }
    let leader_end = leader_end_offset.max(0) as u64;
    if leader_epoch == crate::log::UNDEFINED_EPOCH {
        // "The leader's offset ... will be used for truncation."
        return (leader_end.min(fetch_offset), true);
    }
    let (follower_epoch, follower_end) = follower_end_offset_for;
    if follower_end < 0 {
        // UnifiedLog.endOffsetForEpoch is None: "safe to truncate to leader's offset".
        return (leader_end.min(fetch_offset), true);
    }
    let follower_end = follower_end as u64;
    if follower_epoch != leader_epoch {
        // "the follower does not know about the epoch that leader replied with": truncate to
        // the end of the largest epoch it knows below it, and ask again.
        (follower_end.min(fetch_offset), false)
    } else {
        (follower_end.min(leader_end).min(fetch_offset), true)
    }
}

impl ReplicaFetcher {
    fn next_generation(&mut self) -> u64 {
        self.fetch_generation += 1;
        self.fetch_generation
    }

    /// The thread that fetches `tp` from `leader`: AbstractFetcherManager.getFetcherId
    /// (`Utils.abs(31 * topic.hashCode() + partition) % numFetchers`).
    pub(crate) fn thread_of(ctx: &Ctx, tp: Tp, leader: BrokerId) -> ThreadKey {
        let name = ctx.topics.name(tp);
        let fetchers = ctx.config.num_replica_fetchers.max(1);
        let id = crate::hashing::fetcher_id(&name.topic, name.partition, fetchers);
        (leader, id)
    }

    /// `tp` is (re)pointed at its leader (ReplicaFetcherManager.addFetcherForPartitions with
    /// ReplicaManager.initialFetchOffset): it joins its thread, which fetches at once unless
    /// a request of other partitions is in flight (the partition then goes in the next one,
    /// when that answer is in).
    pub(crate) fn start(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partitions: &mut VecMap<Tp, Partition>,
        tp: Tp,
    ) {
        let Some(partition) = partitions.get_mut(&tp) else {
            return;
        };
        let log = &mut partition.log;
        // A log with no epoch information cannot use the leader's divergence check: it is
        // truncated to its HW first (the TRUNCATING state). Before KIP-101 (protocol
        // `pre-kip-101`, Kafka 0.10.2) every replica that became follower was:
        // ReplicaManager.makeFollowers passed each new follower's highWatermark to
        // logManager.truncateTo, the HW being the one read back from
        // replication-offset-checkpoint after a restart.
        let by_epoch = ctx.config.protocol.has_leader_epoch_truncation();
        if (!by_epoch || log.epoch_cache.entries.is_empty())
            && log.log_end_offset() > log.high_watermark
        {
            let hw = log.high_watermark;
            if let Some(t) = log.truncate_to(hw) {
                record_truncation(ctx, tp, host.id, t, None);
            }
        }
        let generation = self.next_generation();
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        f.in_flight_fetch = None;
        f.backing_off_until = None;
        let Some(leader) = f.leader else { return };
        let key = Self::thread_of(ctx, tp, leader);
        let in_flight = self.threads.get(&key).and_then(|t| t.in_flight);
        let others_wait = in_flight.is_some_and(|id| {
            partitions
                .values()
                .any(|p| matches!(&p.role, Role::Follower(f) if f.in_flight_fetch == Some(id)))
        });
        if others_wait {
            return;
        }
        let thread = self.thread(key);
        thread.in_flight = None;
        thread.generation = generation;
        host.set_timer(
            ctx,
            0,
            BrokerTimer::SendFetch {
                leader: key.0,
                fetcher_id: key.1,
                generation,
            },
        );
    }

    fn thread(&mut self, key: ThreadKey) -> &mut FetcherThread {
        if !self.threads.contains_key(&key) {
            self.threads.insert(key, FetcherThread::default());
        }
        &mut self.threads[&key]
    }

    /// The thread's next fetch in `delay` ms (a newer generation: older timers die).
    fn schedule(&mut self, ctx: &mut Ctx, host: &Host, key: ThreadKey, delay: u64) {
        let generation = self.next_generation();
        self.thread(key).generation = generation;
        host.set_timer(
            ctx,
            delay,
            BrokerTimer::SendFetch {
                leader: key.0,
                fetcher_id: key.1,
                generation,
            },
        );
    }

    /// The partitions of thread `key`: followers of its leader with its fetcher id that are
    /// not failed, in index order.
    fn members(ctx: &Ctx, partitions: &VecMap<Tp, Partition>, key: ThreadKey) -> Vec<Tp> {
        let fetchers = ctx.config.num_replica_fetchers.max(1);
        let mut out = Vec::new();
        for (tp, p) in partitions {
            let Role::Follower(f) = &p.role else { continue };
            if f.failed || f.leader != Some(key.0) {
                continue;
            }
            let name = ctx.topics.name(*tp);
            if crate::hashing::fetcher_id(&name.topic, name.partition, fetchers) == key.1 {
                out.push(*tp);
            }
        }
        out
    }

    /// AbstractFetcherThread.maybeFetch → buildFetch: one Fetch with every partition of the
    /// thread that is ready and not throttled (RemoteLeaderEndPoint.shouldFollowerThrottle);
    /// none, the thread waits for the first to end its backoff, or `replica.fetch.backoff.ms`
    /// when one was throttled (`partitionMapCond.await(fetchBackOffMs)`), or, with none
    /// left, idles.
    pub(crate) fn send_fetch(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partitions: &mut VecMap<Tp, Partition>,
        key: ThreadKey,
        generation: u64,
    ) {
        match self.threads.get(&key) {
            Some(t) if t.generation == generation && t.in_flight.is_none() => {}
            _ => return,
        }
        let now = ctx.now;
        let mut ready: Vec<FetchPartition> = Vec::new();
        let mut next_ready: Option<TimeMs> = None;
        for tp in Self::members(ctx, partitions, key) {
            let p = &partitions[&tp];
            let Role::Follower(f) = &p.role else { continue };
            if f.in_flight_fetch.is_some() {
                continue;
            }
            match f.backing_off_until {
                Some(t) if t > now => next_ready = Some(next_ready.map_or(t, |n| n.min(t))),
                // shouldFollowerThrottle: "!fetchState.isReplicaInSync &&
                // quota.isThrottled(topicPartition) && quota.isQuotaExceeded", in sync being
                // a lag known and 0 (PartitionFetchState.isReplicaInSync).
                _ if f.fetch_state_lag != Some(0)
                    && self.quota.is_throttled(tp)
                    && self.quota.is_quota_exceeded(now) =>
                {
                    let t = now + ctx.config.replica_fetch_backoff_ms;
                    next_ready = Some(next_ready.map_or(t, |n| n.min(t)));
                }
                _ => {
                    let log = &p.log;
                    // Before KIP-101 a fetch carried no leader epoch of the follower's log
                    // (FetchRequest v3, Kafka 0.10.2): the leader could not tell where the
                    // logs diverge. From KIP-101 to 2.6 the follower asked where its latest
                    // epoch ends only on becoming follower (OffsetsForLeaderEpoch: once
                    // before KIP-279, until the logs agree after it), then fetched without
                    // it: the leader's divergence check answers those questions here.
                    let protocol = ctx.config.protocol;
                    let last_fetched_epoch = if protocol.has_leader_epoch_truncation()
                        && (protocol.has_divergence_check_in_fetch() || f.awaiting_epoch_end)
                    {
                        log.epoch_cache.latest_epoch()
                    } else {
                        None
                    };
                    ready.push(FetchPartition {
                        tp,
                        fetch_offset: log.log_end_offset(),
                        log_start_offset: log.log_start_offset,
                        current_leader_epoch: f.leader_epoch,
                        last_fetched_epoch,
                    });
                }
            }
        }
        if ready.is_empty() {
            if let Some(t) = next_ready {
                self.schedule(ctx, host, key, t - now);
            }
            return;
        }
        let fetch_id = self.next_generation();
        for fp in &ready {
            if let Some(Role::Follower(f)) = partitions.get_mut(&fp.tp).map(|p| &mut p.role) {
                f.in_flight_fetch = Some(fetch_id);
                f.backing_off_until = None;
            }
        }
        self.thread(key).in_flight = Some(fetch_id);
        ctx.send(
            Node::Broker(host.id),
            Node::Broker(key.0),
            Payload::Fetch {
                fetch_id,
                fetcher_id: key.1,
                replica_id: host.id,
                // KIP-903 (Kafka 3.5) put the broker epoch in a follower's fetch (FetchRequest
                // v15's ReplicaState.ReplicaEpoch); before it, -1 ("no epoch": the leader takes
                // the fetch state as it comes, and its AlterPartition names no epoch either:
                // protocol `pre-kip-903` and older).
                broker_epoch: if ctx.config.protocol.has_broker_epoch_in_fetch() {
                    host.broker_epoch
                } else {
                    -1
                },
                partitions: ready,
            },
        );
        host.set_timer(
            ctx,
            ctx.config.replica_socket_timeout_ms,
            BrokerTimer::FetchTimeout {
                leader: key.0,
                fetcher_id: key.1,
                fetch_id,
            },
        );
    }

    /// The request `fetch_id` of thread `key` failed (no answer, or a reset connection):
    /// `handlePartitionsWithErrors` delays each of its partitions by
    /// `replica.fetch.backoff.ms`. False when the thread no longer waits for it, or none of
    /// its partitions does (they all moved to other threads or leaders: the thread is idle,
    /// `shutdownIdleFetcherThreads`, and nothing is logged).
    fn fail_request(
        &mut self,
        ctx: &mut Ctx,
        partitions: &mut VecMap<Tp, Partition>,
        key: ThreadKey,
        fetch_id: u64,
    ) -> bool {
        match self.threads.get_mut(&key) {
            Some(t) if t.in_flight == Some(fetch_id) => t.in_flight = None,
            _ => return false,
        }
        let until = ctx.now + ctx.config.replica_fetch_backoff_ms;
        let mut any = false;
        for p in partitions.values_mut() {
            if let Role::Follower(f) = &mut p.role {
                if f.in_flight_fetch == Some(fetch_id) {
                    f.in_flight_fetch = None;
                    f.backing_off_until = Some(until);
                    any = true;
                }
            }
        }
        any
    }

    /// No response within replica.socket.timeout.ms: the request failed; back off and retry.
    pub(crate) fn on_timeout(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partitions: &mut VecMap<Tp, Partition>,
        key: ThreadKey,
        fetch_id: u64,
    ) {
        // The request's partitions, as its `fetchData` names them, where the cluster has
        // more than one (`Topics::label`).
        let mut named = Vec::new();
        for p in partitions.values() {
            if let Role::Follower(f) = &p.role {
                if f.in_flight_fetch == Some(fetch_id) {
                    named.extend(ctx.tp_label(p.tp));
                }
            }
        }
        let event = Event::FetchTimedOut {
            broker: host.id,
            leader: Some(key.0),
            fetcher_id: key.1,
            partitions: named,
            replica_socket_timeout_ms: ctx.config.replica_socket_timeout_ms,
        };
        self.on_request_failed(ctx, host, partitions, key, fetch_id, event);
    }

    /// The connection to the leader was reset (its process is gone): the fetch fails as a
    /// network error does (ReplicaFetcherThread: "Error in response for fetch request" with
    /// an IOException), and is retried after replica.fetch.backoff.ms.
    pub(crate) fn on_disconnected(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partitions: &mut VecMap<Tp, Partition>,
        key: ThreadKey,
        fetch_id: u64,
    ) {
        let event = Event::FetchDisconnected {
            broker: host.id,
            leader: key.0,
            fetcher_id: key.1,
        };
        self.on_request_failed(ctx, host, partitions, key, fetch_id, event);
    }

    /// A request that failed as a whole: its partitions back off, `event` says why, and the
    /// thread fetches again after replica.fetch.backoff.ms.
    fn on_request_failed(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partitions: &mut VecMap<Tp, Partition>,
        key: ThreadKey,
        fetch_id: u64,
        event: Event,
    ) {
        let waited = self.threads.get(&key).and_then(|t| t.in_flight) == Some(fetch_id);
        if !self.fail_request(ctx, partitions, key, fetch_id) {
            // Every partition of the request left the thread meanwhile: one that joined since
            // is fetched now (doWork), as after an answer.
            if waited && !Self::members(ctx, partitions, key).is_empty() {
                self.schedule(ctx, host, key, 0);
            }
            return;
        }
        ctx.emit(event);
        self.schedule(ctx, host, key, ctx.config.replica_fetch_backoff_ms);
    }

    /// ReplicaFetcherManager.removeFetcherForPartitions: `tp` stops fetching until metadata
    /// with a new leader epoch starts it again.
    pub(crate) fn stop(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        reason: FetcherRemovedReason,
    ) {
        let _ = self.next_generation();
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        if f.failed {
            return;
        }
        f.failed = true;
        f.in_flight_fetch = None;
        f.backing_off_until = None;
        ctx.emit(Event::FetcherRemoved {
            broker: host.id,
            tp: ctx.tp_name(tp),
            reason,
        });
    }

    /// AbstractFetcherThread.processFetchRequest: the answer to thread `from`'s request
    /// `fetch_id`, partition by partition; then the thread fetches again (after the
    /// shortest wait any partition asks for).
    pub(crate) fn on_response(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partitions: &mut VecMap<Tp, Partition>,
        from: Node,
        fetch_id: u64,
        data: Vec<FetchPartitionData>,
    ) {
        let Node::Broker(leader) = from else { return };
        let Some(key) = self
            .threads
            .iter()
            .find(|(k, t)| k.0 == leader && t.in_flight == Some(fetch_id))
            .map(|(k, _)| *k)
        else {
            return; // a response to a fetch we no longer wait for
        };
        self.thread(key).in_flight = None;
        let mut next: Option<u64> = None;
        for d in data {
            let Some(partition) = partitions.get_mut(&d.tp) else {
                continue;
            };
            match &mut partition.role {
                Role::Follower(f)
                    if f.in_flight_fetch == Some(fetch_id) && f.leader == Some(leader) =>
                {
                    f.in_flight_fetch = None;
                }
                _ => continue, // the partition moved on since the request went
            }
            let Some(delay) = self.on_partition_data(ctx, host, partition, key, d) else {
                continue;
            };
            if let Role::Follower(f) = &mut partition.role {
                f.backing_off_until = (delay > 0).then_some(ctx.now + delay);
            }
            next = Some(next.map_or(delay, |n| n.min(delay)));
        }
        match next {
            Some(delay) => self.schedule(ctx, host, key, delay),
            // AbstractFetcherThread.doWork fetches again for every partition the thread holds:
            // one that joined while this request was out (`start` waits for the answer) is
            // fetched now, though none of the request's partitions is left to ask for it.
            None if !Self::members(ctx, partitions, key).is_empty() => {
                self.schedule(ctx, host, key, 0)
            }
            None => {}
        }
    }

    /// One partition's data in a fetch response (processFetchRequest's per-partition
    /// match). Returns when the partition may fetch again, or None when it left the fetcher.
    fn on_partition_data(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        (leader, fetcher_id): ThreadKey,
        d: FetchPartitionData,
    ) -> Option<u64> {
        let tp = partition.tp;
        if d.error == ErrorCode::FENCED_LEADER_EPOCH {
            // AbstractFetcherThread.onPartitionFenced: the request's epoch is this fetcher's
            // current one (a fetch of an older epoch is dropped above), so "Will await the new
            // LeaderAndIsr state before resuming fetching": markPartitionFailed. Fetching
            // starts again when metadata with a new leader epoch re-creates the fetcher.
            let Role::Follower(f) = &mut partition.role else {
                return None;
            };
            f.failed = true;
            f.backing_off_until = None;
            ctx.emit(Event::FencedLeaderEpoch {
                broker: host.id,
                leader,
                fetcher_id,
                tp: ctx.tp_name(tp),
                leader_epoch: f.leader_epoch,
            });
            return None;
        }
        if d.error == ErrorCode::OFFSET_OUT_OF_RANGE {
            return Some(self.on_out_of_range(
                ctx,
                host,
                partition,
                leader,
                d.leader_log_end_offset,
                d.leader_log_start_offset,
            ));
        }
        if d.error != ErrorCode::NONE {
            return Some(ctx.config.replica_fetch_backoff_ms);
        }
        let by_epoch = ctx.config.protocol.has_epoch_in_truncation_answer();
        if let Role::Follower(f) = &mut partition.role {
            // The truncating state ends (fetch on without the epoch) on the one answer before
            // KIP-279 (1.1's maybeTruncate); after it, when the answer has no divergence
            // left: 2.0's maybeTruncate asks again from the offset it truncated to until the
            // leader's epoch and ours agree (OffsetTruncationState.truncationCompleted).
            if !by_epoch || d.diverging_epoch.is_none() {
                f.awaiting_epoch_end = false;
            }
        }
        let log = &mut partition.log;
        if let Some((epoch, end)) = d.diverging_epoch {
            let leo = log.log_end_offset();
            let follower_end = log.epoch_cache.end_offset_for(epoch, leo);
            let (offset, _complete) = if by_epoch {
                truncation_offset(epoch, end, follower_end, leo)
            } else {
                // ReplicaFetcherThread.maybeTruncate (1.1.0): OffsetsForLeaderEpoch v0 gave
                // an offset only; an unknown one keeps the fetch offset, one at or past our
                // end keeps the log, and any other is truncated to, whatever epoch our own
                // record there has (the hole KIP-279 closed).
                match end {
                    crate::log::UNDEFINED_EPOCH_OFFSET => (leo, true),
                    end => ((end.max(0) as u64).min(leo), true),
                }
            };
            // v0's answer had no epoch: the line says -1.
            let epoch = if by_epoch {
                epoch
            } else {
                crate::log::UNDEFINED_EPOCH
            };
            let t = log.truncate_to(offset);
            ctx.emit(Event::TruncatingToEpochEndOffset {
                broker: host.id,
                leader,
                fetcher_id,
                tp: ctx.tp_name(tp),
                offset,
                leader_epoch: epoch,
                end_offset: end,
            });
            if let Some(t) = t {
                record_truncation(ctx, tp, host.id, t, None);
            }
            return Some(0);
        }
        let records = d.records;
        if let Some(first) = records.first() {
            if first.offset != log.log_end_offset() {
                // Not where we asked (the log changed meanwhile): fetch again.
                return Some(0);
            }
        }
        // The leader reads a contiguous run of its log from the fetch offset.
        debug_assert!(
            records.windows(2).all(|w| w[1].offset == w[0].offset + 1),
            "{records:?}"
        );
        let from = log.log_end_offset();
        log.append_as_follower(&records);
        if !records.is_empty() {
            let interval = ctx
                .topics
                .flush_messages(tp, ctx.config.log_flush_interval_messages);
            log.appended(from, ctx.now, ctx.config, interval);
        }
        // ReplicaFetcherThread.processPartitionData: "Traffic from both in-sync and out of
        // sync replicas are accounted for in replication quota".
        if self.quota.is_throttled(tp) {
            let bytes = crate::record::records_size_in_bytes(&records);
            self.quota.record(bytes, ctx.now);
        }
        let leo = log.log_end_offset();
        log.update_high_watermark(d.high_watermark.min(leo));
        // AbstractFetcherThread.processFetchRequest: "lag = Math.max(0L,
        // partitionData.highWatermark - nextOffset)", the next offset being our log end.
        // The fetch state keeps its lag through an answer that appended nothing
        // ("validBytes > 0 || currentFetchState.lag.isEmpty"); the metric takes every one.
        if let Role::Follower(f) = &mut partition.role {
            let lag = d.high_watermark.saturating_sub(leo);
            f.lag = Some(lag);
            if !records.is_empty() || f.fetch_state_lag.is_none() {
                f.fetch_state_lag = Some(lag);
            }
        }
        Some(self.slow_ms)
    }

    /// AbstractFetcherThread.handleOutOfRangeError → fetchOffsetAndTruncate. The leader's end
    /// and start offsets come with the error response here (Kafka asks the leader for them
    /// with ListOffsets LATEST and EARLIEST).
    ///
    /// - The leader's LEO is below ours (an unclean election happened): truncate to it.
    /// - Otherwise keep the log and fetch from max(leader's log start, our LEO); only when the
    ///   leader's log start is past our LEO is the whole log dropped (truncateFullyAndStartAt).
    ///
    /// When the position does not change (the leader could not place our last fetched epoch
    /// and its log covers ours) the same fetch would get the same answer: the partition is
    /// retried after replica.fetch.backoff.ms instead of at once (Kafka's fetcher retries at
    /// the speed of a round trip). Returns when the partition may fetch again.
    pub(crate) fn on_out_of_range(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        leader: BrokerId,
        leader_end: u64,
        leader_start: u64,
    ) -> u64 {
        let log = &mut partition.log;
        let leo = log.log_end_offset();
        let truncated = if leader_end < leo {
            log.truncate_to(leader_end)
        } else if leader_start > leo {
            let t = log.truncate_to(log.log_start_offset);
            log.log_start_offset = leader_start;
            t
        } else {
            None
        };
        let moved = log.log_end_offset() != leo;
        // fetchOffsetAndTruncate: the lag is 0 after truncating to the leader's end, else
        // the leader's end minus the offset to fetch ("initialLag").
        let lag = leader_end.saturating_sub(log.log_end_offset());
        if let Role::Follower(f) = &mut partition.role {
            // A new PartitionFetchState with the initial lag, and the metric with it.
            (f.lag, f.fetch_state_lag) = (Some(lag), Some(lag));
        }
        if let Some(t) = truncated {
            record_truncation(
                ctx,
                partition.tp,
                host.id,
                t,
                Some(TruncationReason::OffsetOutOfRange { leader }),
            );
        }
        if moved {
            0
        } else {
            ctx.config.replica_fetch_backoff_ms
        }
    }

    /// The fetcher threads that have partitions on a broker whose replicas are `partitions`
    /// (ReplicaFetcherManager.fetcherThreadMap after `shutdownIdleFetcherThreads`): one per
    /// (leader, fetcher id) among the followers that fetch, in order.
    pub(crate) fn live_threads(
        topics: &crate::metadata::Topics,
        config: &crate::config::Config,
        partitions: &VecMap<Tp, Partition>,
    ) -> Vec<ThreadKey> {
        let fetchers = config.num_replica_fetchers.max(1);
        let mut out: Vec<ThreadKey> = Vec::new();
        for (tp, p) in partitions {
            let Role::Follower(f) = &p.role else { continue };
            let Some(leader) = f.leader.filter(|_| !f.failed) else {
                continue;
            };
            let name = topics.name(*tp);
            let key = (
                leader,
                crate::hashing::fetcher_id(&name.topic, name.partition, fetchers),
            );
            if let Err(at) = out.binary_search(&key) {
                out.insert(at, key);
            }
        }
        out
    }

    /// The process ended: its fetcher threads are gone.
    pub(crate) fn lose_threads(&mut self) {
        self.threads = VecMap::new();
        self.quota = Default::default();
    }
}

/// Logs a truncation as UnifiedLog does, and tells the observers (the view shows the
/// records falling away).
fn record_truncation(
    ctx: &mut Ctx,
    tp: Tp,
    broker: BrokerId,
    t: crate::log::Truncation,
    reason: Option<TruncationReason>,
) {
    if let Some(reason) = reason {
        ctx.emit(Event::FetcherTruncating { broker, reason });
    }
    ctx.emit(Event::LogTruncated {
        broker,
        tp: ctx.tp_name(tp),
        to_offset: t.to_offset,
        below_high_watermark: t.below_high_watermark,
    });
    if let (Some(first), Some(last)) = (t.removed.first(), t.removed.last()) {
        ctx.emit(Event::RecordsThrownAway {
            broker,
            first_offset: first.offset,
            last_offset: last.offset,
            records: t.removed.clone(),
            below_high_watermark: t.below_high_watermark.is_some(),
        });
    }
    ctx.metrics.truncations += 1;
    ctx.observe(Observation::Truncated(
        tp,
        TruncationRecord {
            time_ms: ctx.now,
            broker,
            to_offset: t.to_offset,
            removed: t.removed,
            below_high_watermark: t.below_high_watermark,
        },
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::EpochCache;

    #[test]
    fn article_000_example_3_truncates_to_ten() {
        // Broker 1 (old leader) holds 0..14 all in epoch 0; the leader answers
        // divergingEpoch(epoch 0, endOffset 10): min(10, 15, 15) = 10.
        let mut c = EpochCache::default();
        c.assign(0, 0);
        let follower_end = c.end_offset_for(0, 15);
        assert_eq!(follower_end, (0, 15));
        assert_eq!(truncation_offset(0, 10, follower_end, 15), (10, true));
    }

    #[test]
    fn unknown_epoch_truncates_to_own_epoch_end_and_asks_again() {
        // Follower knows epochs 0 (from 0) and 2 (from 8), LEO 12; the leader names epoch 1
        // ending at 6. The follower's floor for 1 is epoch 0 ending at 8.
        let mut c = EpochCache::default();
        c.assign(0, 0);
        c.assign(2, 8);
        let follower_end = c.end_offset_for(1, 12);
        assert_eq!(follower_end, (0, 8));
        assert_eq!(truncation_offset(1, 6, follower_end, 12), (8, false));
        // Next round: the follower now asks with epoch 0; the leader says epoch 0 ended at 5.
        let mut c2 = c.clone();
        c2.truncate_from_end(8);
        assert_eq!(
            truncation_offset(0, 5, c2.end_offset_for(0, 8), 8),
            (5, true)
        );
    }

    #[test]
    fn an_unknown_leader_offset_truncates_to_the_fetch_offset_not_to_zero() {
        // AbstractFetcherThread.getOffsetTruncationState: endOffset UNDEFINED_EPOCH_OFFSET →
        // OffsetTruncationState(fetchOffset, truncationCompleted = true); leaderEpoch
        // UNDEFINED_EPOCH → min(endOffset, logEndOffset).
        assert_eq!(
            truncation_offset(
                crate::log::UNDEFINED_EPOCH,
                crate::log::UNDEFINED_EPOCH_OFFSET,
                (crate::log::UNDEFINED_EPOCH, -1),
                12
            ),
            (12, true)
        );
        assert_eq!(
            truncation_offset(crate::log::UNDEFINED_EPOCH, 7, (0, 12), 12),
            (7, true)
        );
    }

    #[test]
    fn no_epoch_at_or_below_truncates_to_leader_end() {
        let mut c = EpochCache::default();
        c.assign(3, 4);
        let follower_end = c.end_offset_for(1, 9);
        // Epoch 1 is older than any the follower knows: it ends where epoch 3 starts.
        assert_eq!(follower_end, (1, 4));
        assert_eq!(truncation_offset(1, 2, follower_end, 9), (2, true));
        assert_eq!(
            truncation_offset(1, 7, (crate::log::UNDEFINED_EPOCH, -1), 9),
            (7, true)
        );
    }
}

#[cfg(test)]
mod truncating_state_tests {
    use crate::partition::Role;
    use crate::protocol::Protocol;
    use crate::scenario::Scenario;
    use crate::sim::Sim;
    use crate::types::TP0;

    /// Leader 1 holds a, b in epoch 0, c, d in epoch 1 and e in epoch 3; follower 3,
    /// restarted (so a new follower), holds a, b, f in epoch 0 and g in epoch 2. Its first
    /// question (epoch 2) is answered (1, 4): it lacks epoch 1, so it truncates to where its
    /// floor of it (epoch 0) ends, 3, where f still differs from c; only a second question
    /// (epoch 0, answered (0, 2)) finds where the logs agree.
    fn follower_values_after_its_truncating_state(protocol: Protocol) -> Vec<String> {
        let mut s = Scenario::from_json(
            r#"{"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b"]},
                {"at":1000,"action":"kill","broker":3},
                {"at":2500,"action":"start","broker":3}]}"#,
        )
        .expect("scenario");
        s.protocol = protocol;
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(2_000);
        let to_strings = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let leader = &mut sim.brokers[&1].partitions[&TP0].log;
        leader.append_as_leader(1, &to_strings(&["c", "d"]));
        leader.append_as_leader(3, &to_strings(&["e"]));
        leader.epoch_cache.assign(1, 2);
        leader.epoch_cache.assign(3, 4);
        let follower = &mut sim.brokers[&3].partitions[&TP0].log;
        follower.wipe();
        follower.append_as_leader(0, &to_strings(&["a", "b", "f"]));
        follower.append_as_leader(2, &to_strings(&["g"]));
        follower.epoch_cache.assign(0, 0);
        follower.epoch_cache.assign(2, 3);
        sim.advance_to(15_000);
        assert!(matches!(
            sim.brokers[&3].partitions[&TP0].role,
            Role::Follower(_)
        ));
        let log = &sim.brokers[&3].partitions[&TP0].log;
        (0..log.log_end_offset())
            .filter_map(|o| log.record_at(o).map(|r| r.value.clone()))
            .collect()
    }

    #[test]
    fn after_kip_279_the_truncating_state_asks_until_the_logs_agree() {
        // Kafka 2.0 (AbstractFetcherThread.maybeTruncate, truncationCompleted): two rounds.
        assert_eq!(
            follower_values_after_its_truncating_state(Protocol::PreKip320),
            ["a", "b", "c", "d", "e"]
        );
        // Kafka 1.1 asked once and got 4 without an epoch, its log end: it kept f and g.
        assert_eq!(
            follower_values_after_its_truncating_state(Protocol::Kip101WithoutKip279),
            ["a", "b", "f", "g", "e"]
        );
    }
}
