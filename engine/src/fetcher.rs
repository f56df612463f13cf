//! The follower side: ReplicaFetcherThread / AbstractFetcherThread. One fetch in flight per
//! follower; the response's records are appended as the leader wrote them; the follower's HW
//! is min(leader HW, own LEO); a diverging epoch truncates the log (truncationOffset).
//!
//! The [`ReplicaFetcher`] is the broker's fetcher thread: it keeps the counter its fetch ids
//! and timer generations come from, and drives the follower's [`Partition`] (its log and
//! [`FollowerState`]), which the broker passes in with the [`Host`] it runs on.

use crate::effect::{BrokerTimer, Ctx, Observation};
use crate::event::{Event, FetcherRemovedReason, TruncationReason};
use crate::network::Payload;
use crate::partition::{FollowerState, Host, Partition, Role};
use crate::snapshot::TruncationRecord;
use crate::types::{BrokerId, ErrorCode, Node, Tp};

/// A broker's replica fetcher (ReplicaFetcherThread): what it keeps across the partitions
/// it follows and across leaders.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaFetcher {
    /// Counter for fetch ids and timer generations (never reset, not even by a restart, so
    /// an id is never reused).
    pub fetch_generation: u64,
    /// Extra time each fetch takes on this broker (a slow disk or a busy machine): the next
    /// fetch after a response waits this long.
    pub slow_ms: u64,
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

    /// The fetcher is (re)pointed at the leader: ReplicaManager.initialFetchOffset, then fetch.
    pub(crate) fn start(&mut self, ctx: &mut Ctx, host: &Host, partition: &mut Partition) {
        let log = &mut partition.log;
        // A log with no epoch information cannot use the leader's divergence check: it is
        // truncated to its HW first (the TRUNCATING state).
        if log.epoch_cache.entries.is_empty() && log.log_end_offset() > log.high_watermark {
            let hw = log.high_watermark;
            if let Some(t) = log.truncate_to(hw) {
                record_truncation(ctx, partition.tp, host.id, t, None);
            }
        }
        let generation = self.next_generation();
        if let Role::Follower(f) = &mut partition.role {
            f.in_flight_fetch = None;
            f.generation = generation;
            f.backing_off_until = None;
        }
        host.set_timer(
            ctx,
            0,
            BrokerTimer::SendFetch {
                tp: partition.tp,
                generation,
            },
        );
    }

    fn schedule(&mut self, ctx: &mut Ctx, host: &Host, tp: Tp, f: &mut FollowerState, delay: u64) {
        let generation = self.next_generation();
        f.generation = generation;
        f.backing_off_until = (delay > 0).then_some(ctx.now + delay);
        host.set_timer(ctx, delay, BrokerTimer::SendFetch { tp, generation });
    }

    /// RemoteLeaderEndPoint.buildFetch and send.
    pub(crate) fn send_fetch(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        generation: u64,
    ) {
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        if f.generation != generation || f.in_flight_fetch.is_some() || f.failed {
            return;
        }
        let Some(leader) = f.leader else { return };
        let log = &partition.log;
        let fetch_id = self.next_generation();
        f.in_flight_fetch = Some(fetch_id);
        f.backing_off_until = None;
        ctx.send(
            Node::Broker(host.id),
            Node::Broker(leader),
            Payload::Fetch {
                fetch_id,
                tp,
                replica_id: host.id,
                broker_epoch: host.broker_epoch,
                fetch_offset: log.log_end_offset(),
                log_start_offset: log.log_start_offset,
                current_leader_epoch: f.leader_epoch,
                last_fetched_epoch: log.epoch_cache.latest_epoch(),
            },
        );
        host.set_timer(
            ctx,
            ctx.config.replica_socket_timeout_ms,
            BrokerTimer::FetchTimeout {
                tp: partition.tp,
                fetch_id,
            },
        );
    }

    /// No response within replica.socket.timeout.ms: the request failed; back off and retry.
    pub(crate) fn on_timeout(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        fetch_id: u64,
    ) {
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        if f.in_flight_fetch != Some(fetch_id) {
            return;
        }
        f.in_flight_fetch = None;
        ctx.emit(Event::FetchTimedOut {
            broker: host.id,
            leader: f.leader,
            replica_socket_timeout_ms: ctx.config.replica_socket_timeout_ms,
        });
        self.schedule(ctx, host, tp, f, ctx.config.replica_fetch_backoff_ms);
    }

    /// ReplicaFetcherManager.removeFetcherForPartitions: this follower stops fetching until
    /// metadata with a new leader epoch starts it again.
    pub(crate) fn stop(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        reason: FetcherRemovedReason,
    ) {
        let generation = self.next_generation();
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        if f.failed {
            return;
        }
        f.failed = true;
        f.in_flight_fetch = None;
        f.generation = generation;
        f.backing_off_until = None;
        ctx.emit(Event::FetcherRemoved {
            broker: host.id,
            tp: ctx.tp_name(tp),
            reason,
        });
    }

    /// The connection to the leader was reset (its process is gone): the fetch fails as a
    /// network error does (ReplicaFetcherThread: "Error in response for fetch request" with
    /// an IOException), and is retried after replica.fetch.backoff.ms.
    pub(crate) fn on_disconnected(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        from: Node,
        fetch_id: u64,
    ) {
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        if f.in_flight_fetch != Some(fetch_id) || f.leader.map(Node::Broker) != Some(from) {
            return;
        }
        f.in_flight_fetch = None;
        let leader = f.leader.unwrap_or(0);
        ctx.emit(Event::FetchDisconnected {
            broker: host.id,
            leader,
        });
        self.schedule(ctx, host, tp, f, ctx.config.replica_fetch_backoff_ms);
    }

    /// AbstractFetcherThread.processFetchRequest for our one partition.
    pub(crate) fn on_response(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        from: Node,
        payload: Payload,
    ) {
        let Payload::FetchResponse {
            fetch_id,
            tp: _,
            error,
            high_watermark,
            records,
            diverging_epoch,
            leader_log_end_offset,
            leader_log_start_offset,
        } = payload
        else {
            return;
        };
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        if f.in_flight_fetch != Some(fetch_id) || f.leader.map(Node::Broker) != Some(from) {
            return; // a response to a fetch we no longer wait for
        }
        f.in_flight_fetch = None;
        let leader = f.leader.unwrap_or(0);
        if error == ErrorCode::FENCED_LEADER_EPOCH {
            // AbstractFetcherThread.onPartitionFenced: the request's epoch is this fetcher's
            // current one (a fetch of an older epoch is dropped above), so "Will await the new
            // LeaderAndIsr state before resuming fetching": markPartitionFailed. Fetching
            // starts again when metadata with a new leader epoch re-creates the fetcher.
            f.failed = true;
            f.backing_off_until = None;
            ctx.emit(Event::FencedLeaderEpoch {
                broker: host.id,
                leader,
                tp: ctx.tp_name(partition.tp),
                leader_epoch: f.leader_epoch,
            });
            return;
        }
        if error == ErrorCode::OFFSET_OUT_OF_RANGE {
            self.on_out_of_range(
                ctx,
                host,
                partition,
                leader,
                leader_log_end_offset,
                leader_log_start_offset,
            );
            return;
        }
        if error != ErrorCode::NONE {
            self.schedule(ctx, host, tp, f, ctx.config.replica_fetch_backoff_ms);
            return;
        }
        let log = &mut partition.log;
        if let Some((epoch, end)) = diverging_epoch {
            let leo = log.log_end_offset();
            let follower_end = log.epoch_cache.end_offset_for(epoch, leo);
            let (offset, _complete) = truncation_offset(epoch, end, follower_end, leo);
            let t = log.truncate_to(offset);
            ctx.emit(Event::TruncatingToEpochEndOffset {
                broker: host.id,
                leader,
                tp: ctx.tp_name(partition.tp),
                offset,
                leader_epoch: epoch,
                end_offset: end,
            });
            if let Some(t) = t {
                record_truncation(ctx, partition.tp, host.id, t, None);
            }
            self.schedule(ctx, host, tp, f, 0);
            return;
        }
        if let Some(first) = records.first() {
            if first.offset != log.log_end_offset() {
                // Not where we asked (the log changed meanwhile): fetch again.
                self.schedule(ctx, host, tp, f, 0);
                return;
            }
        }
        // The leader reads a contiguous run of its log from the fetch offset.
        debug_assert!(
            records.windows(2).all(|w| w[1].offset == w[0].offset + 1),
            "{records:?}"
        );
        log.append_as_follower(&records);
        let leo = log.log_end_offset();
        log.update_high_watermark(high_watermark.min(leo));
        self.schedule(ctx, host, tp, f, self.slow_ms);
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
    /// the speed of a round trip).
    pub(crate) fn on_out_of_range(
        &mut self,
        ctx: &mut Ctx,
        host: &Host,
        partition: &mut Partition,
        leader: BrokerId,
        leader_end: u64,
        leader_start: u64,
    ) {
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
        if let Some(t) = truncated {
            record_truncation(
                ctx,
                partition.tp,
                host.id,
                t,
                Some(TruncationReason::OffsetOutOfRange { leader }),
            );
        }
        let delay = if moved {
            0
        } else {
            ctx.config.replica_fetch_backoff_ms
        };
        let tp = partition.tp;
        let Role::Follower(f) = &mut partition.role else {
            return;
        };
        self.schedule(ctx, host, tp, f, delay);
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
