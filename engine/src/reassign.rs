//! `kafka-reassign-partitions.sh` (tools' ReassignPartitionsCommand): `--execute` (with
//! `--additional`), `--verify` and `--cancel` (with `--preserve-throttles`) with a
//! reassignment file, as the simulator runs them against
//! the controller (`Controller::on_alter_partition_reassignments`, which is
//! ReplicationControlManager.alterPartitionReassignments), and the lines the tool prints,
//! in its words. `--throttle` sets the replication throttle configs the tool computes
//! (calculateProposedMoveMap, calculateLeaderThrottles, calculateFollowerThrottles) and
//! `--verify` clears them once no reassignment is left (clearAllThrottles); they are
//! ConfigRecords, which the brokers' quota managers apply from the metadata (`quota.rs`).
//!
//! Where the tool prints a blank line (around the rollback JSON, and `--verify`'s empty list
//! of log-directory moves) the transcript has none: a transcript line is never blank.
//!
//! Article 004's Kafka 4.x transcript (lab step 5) quotes three lines, `Successfully started
//! partition reassignment for move-0`, `Reassignment of partition move-0 is completed.` and
//! the describe line; they are printed here byte for byte. The article leaves out the tool's
//! other lines (the rollback file, `Status of partition reassignment:`, the throttle lines),
//! which are printed as trunk's ReassignPartitionsCommand prints them: no line of the article
//! differs from the source. Its describe line joins the fields with two spaces and leaves out
//! `Elr:`; `describe` keeps the one-space line every preset prints (see the preset test).

use crate::controller::Controller;
use crate::error::ScenarioError;
use crate::event::{Event, Tool};
use crate::scenario::Reassignment;
use crate::sim::Sim;
use crate::types::{BrokerId, Ids, Tp};

/// ReassignPartitionsCommand.CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE.
const CANNOT_EXECUTE: &str = "Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment.";
/// ReassignPartitionsCommand.YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE.
const RUN_VERIFY: &str = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.";

/// One partition of a reassignment file: the partition, its target replicas.
type Target = (Tp, Vec<BrokerId>);

/// `s` when `n` is not 1 (the tool's `size() == 1 ? "" : "s"`).
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl Sim {
    /// One line the tool printed (not inlined: a dozen call sites).
    #[inline(never)]
    fn reassign_line(&mut self, line: String) {
        self.emit(Event::ToolOutput {
            tool: Tool::ReassignPartitions,
            broker: None,
            line,
        });
    }

    /// The file's partitions, sorted as the tool prints them (compareTopicPartitions: topic
    /// name, then partition), each once (the tool keeps them in a map).
    fn reassign_targets(&self, r: &Reassignment) -> Result<Vec<Target>, ScenarioError> {
        let mut out: Vec<Target> = Vec::with_capacity(r.partitions.len());
        for p in &r.partitions {
            let tp = self.topics.find(&p.topic, p.partition).ok_or_else(|| {
                ScenarioError::new(
                    "reassignment",
                    format!("no partition {}-{} in this cluster", p.topic, p.partition),
                )
            })?;
            if out.iter().any(|(t, _)| *t == tp) {
                continue;
            }
            // An insertion into place: a handful of partitions, and no sort code in the wasm.
            let name = self.topics.name(tp);
            let at = out.partition_point(|(t, _)| {
                let n = self.topics.name(*t);
                (n.topic.as_str(), n.partition) < (name.topic.as_str(), name.partition)
            });
            out.insert(at, (tp, p.replicas.clone()));
        }
        Ok(out)
    }

    /// The partitions named, as `move-0,orders-2`.
    fn tp_list(&self, tps: &[Tp]) -> String {
        let mut out = String::new();
        for (i, tp) in tps.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&self.topics.name(*tp).to_string());
        }
        out
    }

    /// The brokers describeCluster lists: registered and not fenced
    /// (KRaftMetadataCache.getAliveBrokerNodes).
    fn alive_brokers(&self) -> Vec<BrokerId> {
        let mut ids = Vec::new();
        for (id, r) in self.controller.brokers.iter() {
            if !r.fenced {
                ids.push(*id);
            }
        }
        ids
    }

    /// `--execute` (executeAssignment): refused while any reassignment is in progress unless
    /// `additional` (`--additional`), or when a target broker is not alive (verifyBrokerIds);
    /// otherwise the current assignment for rollback, the throttles, and the request to the
    /// controller.
    pub(crate) fn reassign_execute(
        &mut self,
        r: &Reassignment,
        throttle: Option<u64>,
        additional: bool,
    ) -> Result<(), ScenarioError> {
        let targets = self.reassign_targets(r)?;
        // executeAssignment: "If there is an existing assignment, check for --additional
        // before proceeding" (listPartitionReassignments: every partition reassigning).
        if !additional
            && self
                .controller
                .partitions
                .values()
                .any(|p| p.is_reassigning())
        {
            self.reassign_line(CANNOT_EXECUTE.to_string());
            return Ok(());
        }
        let mut brokers = Vec::new();
        for (_, replicas) in &targets {
            brokers.extend_from_slice(replicas);
        }
        // The proposal's brokers are a HashSet<Integer>: for ids below 16, ascending.
        let alive = self.alive_brokers();
        if let Some(b) = crate::sort::sorted_ids(&brokers)
            .into_iter()
            .find(|b| !alive.contains(b))
        {
            // An AdminCommandFailedException: main prints "Error: " and its message.
            self.reassign_line(format!("Error: Unknown broker id {b}"));
            return Ok(());
        }
        // currentPartitionReplicaAssignmentToString with formatAsReassignmentJson.
        let mut json = String::from("{\"version\":1,\"partitions\":[");
        for (i, (tp, _)) in targets.iter().enumerate() {
            let name = self.topics.name(*tp);
            let replicas = &self.controller.partition(*tp).replicas;
            if i > 0 {
                json.push(',');
            }
            json.push_str(&format!(
                "{{\"topic\":\"{}\",\"partition\":{},\"replicas\":[{}],\"log_dirs\":[",
                name.topic,
                name.partition,
                Ids(replicas)
            ));
            for k in 0..replicas.len() {
                json.push_str(if k == 0 { "\"any\"" } else { ",\"any\"" });
            }
            json.push_str("]}");
        }
        json.push_str("]}");
        self.reassign_line("Current partition replica assignment".to_string());
        self.reassign_line(json);
        self.reassign_line(
            "Save this to use as the --reassignment-json-file option during rollback".to_string(),
        );
        if let Some(rate) = throttle {
            self.reassign_line(RUN_VERIFY.to_string());
            let moves = move_map(&self.controller, &targets);
            let now = self.now;
            self.controller
                .set_reassignment_throttles(now, &self.topics, &moves, rate);
            self.reassign_line(format!(
                "The inter-broker throttle limit was set to {rate} B/s"
            ));
        }
        let request: Vec<(Tp, Option<Vec<BrokerId>>)> = targets
            .iter()
            .map(|(tp, replicas)| (*tp, Some(replicas.clone())))
            .collect();
        let errors = self.controller_reassign(&request);
        if errors.is_empty() {
            let tps: Vec<Tp> = targets.iter().map(|(tp, _)| *tp).collect();
            let line = format!(
                "Successfully started partition reassignment{} for {}",
                plural(tps.len()),
                self.tp_list(&tps)
            );
            self.reassign_line(line);
        } else {
            // A TerseException: its message alone.
            self.error_lines("Error reassigning partition(s):".to_string(), errors);
        }
        Ok(())
    }

    /// A TerseException's lines: `header`, then each refused partition with its message.
    fn error_lines(&mut self, header: String, errors: Vec<(Tp, String)>) {
        self.reassign_line(header);
        for (tp, message) in errors {
            let line = format!("{}: {message}", self.topics.name(tp));
            self.reassign_line(line);
        }
    }

    /// `--verify` (verifyAssignment): each partition's state, then, when no reassignment is
    /// left in the cluster and not `preserve_throttles` (`--preserve-throttles`), every
    /// throttle cleared.
    pub(crate) fn reassign_verify(
        &mut self,
        r: &Reassignment,
        preserve_throttles: bool,
    ) -> Result<(), ScenarioError> {
        let targets = self.reassign_targets(r)?;
        self.reassign_line("Status of partition reassignment:".to_string());
        for (tp, target) in &targets {
            let p = self.controller.partition(*tp);
            let name = self.topics.name(*tp);
            // partitionReassignmentStatesToString.
            let line = if p.is_reassigning() {
                format!("Reassignment of partition {name} is still in progress.")
            } else if p.replicas == *target {
                format!("Reassignment of partition {name} is completed.")
            } else {
                format!(
                    "There is no active reassignment of partition {name}, but replica set is {} rather than {}.",
                    Ids(&p.replicas),
                    Ids(target)
                )
            };
            self.reassign_line(line);
        }
        // "if (!partsOngoing && !movesOngoing && !preserveThrottles) clearAllThrottles".
        if !preserve_throttles
            && !self
                .controller
                .partitions
                .values()
                .any(|p| p.is_reassigning())
        {
            self.clear_all_throttles(&targets, "");
        }
        Ok(())
    }

    /// `--cancel` (cancelAssignment): the listed partitions whose reassignment is active
    /// (one that only adds replicas is left alone: the tool's own filter), reverted by the
    /// controller; then every throttle cleared, unless `preserve_throttles`
    /// (`--preserve-throttles`).
    pub(crate) fn reassign_cancel(
        &mut self,
        r: &Reassignment,
        preserve_throttles: bool,
    ) -> Result<(), ScenarioError> {
        let targets = self.reassign_targets(r)?;
        let mut cancel: Vec<(Tp, Option<Vec<BrokerId>>)> = Vec::new();
        for (tp, _) in &targets {
            let p = self.controller.partition(*tp);
            // "if (reassignment.addingReplicas().isEmpty() || !reassignment.removingReplicas().isEmpty())"
            if p.is_reassigning()
                && (p.adding_replicas.is_empty() || !p.removing_replicas.is_empty())
            {
                cancel.push((*tp, None));
            }
        }
        if cancel.is_empty() {
            self.reassign_line("None of the specified partition reassignments are active.".into());
        } else {
            let errors = self.controller_reassign(&cancel);
            if !errors.is_empty() {
                // A TerseException: the throttles stay.
                let header = format!(
                    "Error cancelling partition reassignment{} for:",
                    plural(errors.len())
                );
                self.error_lines(header, errors);
                return Ok(());
            }
            let tps: Vec<Tp> = cancel.iter().map(|(tp, _)| *tp).collect();
            let line = format!(
                "Successfully cancelled partition reassignment{} for: {}",
                plural(tps.len()),
                self.tp_list(&tps)
            );
            self.reassign_line(line);
        }
        // The tool prints this one with `System.out.print`, no line break: the next line
        // (the throttles cleared) follows it on the same line; with --preserve-throttles
        // ("if (!preserveThrottles) clearAllThrottles") nothing follows it.
        let moves = "None of the specified partition moves are active.";
        if preserve_throttles {
            self.reassign_line(moves.to_string());
        } else {
            self.clear_all_throttles(&targets, moves);
        }
        Ok(())
    }

    /// clearAllThrottles: the throttle rates of every alive broker and every broker of the
    /// file, and the throttled replicas of the file's topics, each line as the tool prints
    /// it (`prefix` before the first).
    fn clear_all_throttles(&mut self, targets: &[Target], prefix: &str) {
        let mut brokers = self.alive_brokers();
        for (_, replicas) in targets {
            brokers.extend_from_slice(replicas);
        }
        // A HashSet<Integer>: ascending for broker ids below 16.
        let mut brokers = crate::sort::sorted_ids(&brokers);
        brokers.dedup();
        let mut topics: Vec<u16> = Vec::new();
        for (tp, _) in targets {
            if !topics.contains(&tp.topic) {
                topics.push(tp.topic);
            }
        }
        let names: Vec<&str> = topics
            .iter()
            .map(|&t| self.topics.topics[usize::from(t)].name.as_str())
            .collect();
        let order = java_hash_set_order(&names);
        let mut topic_list = String::new();
        for (i, &k) in order.iter().enumerate() {
            if i > 0 {
                topic_list.push(',');
            }
            topic_list.push_str(names[k]);
        }
        let broker_line = format!(
            "{prefix}Clearing broker-level throttles on broker{} {}",
            plural(brokers.len()),
            Ids(&brokers)
        );
        let topic_line = format!(
            "Clearing topic-level throttles on topic{} {topic_list}",
            plural(topics.len())
        );
        let now = self.now;
        let offset = self.controller.next_offset;
        self.controller
            .clear_reassignment_throttles(now, &self.topics, &brokers, &topics);
        if self.controller.next_offset != offset {
            // The brokers apply the deleted configs from the metadata: their quota managers
            // stop throttling (`quota.rs`).
            let audience = self.metadata_audience();
            self.controller
                .publish_metadata(&mut crate::effect::node_ctx!(self), &audience);
        }
        self.reassign_line(broker_line);
        self.reassign_line(topic_line);
    }

    /// Sends an AlterPartitionReassignments request to the controller; the partitions it
    /// refused, with the ApiError's message.
    fn controller_reassign(
        &mut self,
        request: &[(Tp, Option<Vec<BrokerId>>)],
    ) -> Vec<(Tp, String)> {
        let audience = self.metadata_audience();
        let results = self.controller.on_alter_partition_reassignments(
            &mut crate::effect::node_ctx!(self),
            request,
            &audience,
        );
        let mut errors = Vec::new();
        for ((tp, _), result) in request.iter().zip(results) {
            if let Err((_, message)) = result {
                errors.push((*tp, message));
            }
        }
        errors
    }
}

/// A partition's move (ReassignPartitionsCommand.PartitionMove): the brokers it moves from
/// (its current replicas) and to (the targets that are not among them).
pub(crate) struct PartitionMove {
    pub tp: Tp,
    pub sources: Vec<BrokerId>,
    pub destinations: Vec<BrokerId>,
}

/// calculateProposedMoveMap: every reassignment in progress (there are some only with
/// `--additional`) as calculateCurrentMoveMap has it (its replicas less the adding ones are
/// the sources, the adding ones the destinations), then each partition of the file: the
/// sources of its move in progress, else its current replicas, and the targets not among
/// them. The file's partitions come first, in the file's order, then the others in partition
/// order (Kafka's maps are HashMaps; the throttles built from them are sorted sets).
fn move_map(controller: &Controller, targets: &[Target]) -> Vec<PartitionMove> {
    let mut out = Vec::with_capacity(targets.len());
    for (tp, target) in targets {
        let p = controller.partition(*tp);
        // "If there is a reassignment in progress, use the sources from moveMap, otherwise
        // use the sources from currentParts".
        let sources = crate::sort::sorted_ids(&crate::types::ids_where(&p.replicas, &|r| {
            !p.adding_replicas.contains(&r)
        }));
        let destinations =
            crate::sort::sorted_ids(&crate::types::ids_where(target, &|r| !sources.contains(&r)));
        out.push(PartitionMove {
            tp: *tp,
            sources,
            destinations,
        });
    }
    for (tp, p) in controller.partitions.iter() {
        if !p.is_reassigning() || targets.iter().any(|(t, _)| t == tp) {
            continue;
        }
        out.push(PartitionMove {
            tp: *tp,
            sources: crate::sort::sorted_ids(&crate::types::ids_where(&p.replicas, &|r| {
                !p.adding_replicas.contains(&r)
            })),
            destinations: crate::sort::sorted_ids(&p.adding_replicas),
        });
    }
    out
}

/// calculateLeaderThrottles (`leader` true: `partition:source` for each source) or
/// calculateFollowerThrottles (`partition:destination` for each destination not a source)
/// of topic `topic`: a TreeSet<String>, so in string order (`10:1` before `2:1`), joined
/// with commas.
pub(crate) fn throttled_replicas(moves: &[PartitionMove], topic: u16, leader: bool) -> String {
    let mut items: Vec<String> = Vec::new();
    for m in moves.iter().filter(|m| m.tp.topic == topic) {
        let ids = if leader { &m.sources } else { &m.destinations };
        // calculateFollowerThrottles: "if (!move.sources.contains(destination))".
        for b in ids.iter().filter(|b| leader || !m.sources.contains(b)) {
            let item = format!("{}:{b}", u32::from(m.tp.partition));
            let at = items.partition_point(|x| *x < item);
            if items.get(at) != Some(&item) {
                items.insert(at, item);
            }
        }
    }
    // Joined by hand: `join` brings a generic copy loop of its own into the wasm.
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out
}

/// The iteration order of a `java.util.HashSet<String>` filled with `names` in order (its
/// default capacity 16, doubled past a load of 0.75): by bucket, `(h ^ h >>> 16) & (n − 1)`
/// of `String.hashCode`, and within a bucket in insertion order. Indices into `names`.
pub(crate) fn java_hash_set_order(names: &[&str]) -> Vec<usize> {
    let mut capacity = 16usize;
    while names.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let bucket = |name: &str| {
        let h = crate::hashing::java_string_hash(name) as u32;
        (h ^ (h >> 16)) as usize & (capacity - 1)
    };
    let keys: Vec<u64> = names.iter().map(|n| bucket(n) as u64).collect();
    crate::sort::stable_order(&keys)
}

impl Controller {
    /// modifyTopicThrottles and modifyInterBrokerThrottle: each moving topic's throttled
    /// replicas, and both rates on every broker a partition moves from or to (ascending, a
    /// TreeSet), each an IncrementalAlterConfigs SET written as a ConfigRecord.
    pub(crate) fn set_reassignment_throttles(
        &mut self,
        now: u64,
        topics: &crate::metadata::Topics,
        moves: &[PartitionMove],
        rate: u64,
    ) {
        let mut moving_topics: Vec<u16> = Vec::new();
        let mut brokers = Vec::new();
        for m in moves {
            if !moving_topics.contains(&m.tp.topic) {
                moving_topics.push(m.tp.topic);
            }
            brokers.extend_from_slice(&m.sources);
            brokers.extend_from_slice(&m.destinations);
        }
        for t in moving_topics {
            let leader = throttled_replicas(moves, t, true);
            let follower = throttled_replicas(moves, t, false);
            let name = &topics.topics[usize::from(t)].name;
            for (config, value) in [
                ("leader.replication.throttled.replicas", &leader),
                ("follower.replication.throttled.replicas", &follower),
            ] {
                self.append(now, "ConfigRecord", format!("ConfigRecord(resourceType=TOPIC, resourceName={name}, name={config}, value={value})"));
            }
            self.throttled_replicas.insert(t, (leader, follower));
        }
        let mut brokers = crate::sort::sorted_ids(&brokers);
        brokers.dedup();
        for b in brokers {
            for config in [
                "leader.replication.throttled.rate",
                "follower.replication.throttled.rate",
            ] {
                self.append(now, "ConfigRecord", format!("ConfigRecord(resourceType=BROKER, resourceName={b}, name={config}, value={rate})"));
            }
            self.throttle_rates.insert(b, (rate, rate));
        }
    }

    /// clearBrokerLevelThrottles and clearTopicLevelThrottles: IncrementalAlterConfigs
    /// DELETEs; a config that was set is removed with a ConfigRecord of value null (one that
    /// was not set writes nothing).
    pub(crate) fn clear_reassignment_throttles(
        &mut self,
        now: u64,
        topics: &crate::metadata::Topics,
        brokers: &[BrokerId],
        topic_ids: &[u16],
    ) {
        for b in brokers {
            if self.throttle_rates.remove(b).is_some() {
                for config in [
                    "leader.replication.throttled.rate",
                    "follower.replication.throttled.rate",
                ] {
                    self.append(now, "ConfigRecord", format!("ConfigRecord(resourceType=BROKER, resourceName={b}, name={config}, value=null)"));
                }
            }
        }
        for t in topic_ids {
            if self.throttled_replicas.remove(t).is_some() {
                let name = &topics.topics[usize::from(*t)].name;
                for config in [
                    "leader.replication.throttled.replicas",
                    "follower.replication.throttled.replicas",
                ] {
                    self.append(now, "ConfigRecord", format!("ConfigRecord(resourceType=TOPIC, resourceName={name}, name={config}, value=null)"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(partition: u16, sources: &[BrokerId], destinations: &[BrokerId]) -> PartitionMove {
        PartitionMove {
            tp: Tp {
                topic: 0,
                partition,
            },
            sources: sources.to_vec(),
            destinations: destinations.to_vec(),
        }
    }

    /// ReassignPartitionsCommandTest.testCalculateLeaderThrottles / FollowerThrottles: a
    /// TreeSet<String> per topic, so `10:1` sorts before `2:1`; a destination that is also a
    /// source is not throttled as a follower.
    #[test]
    fn throttled_replicas_are_the_tools_sorted_strings() {
        let moves = [
            m(0, &[1, 2], &[3]),
            m(10, &[1], &[4]),
            m(2, &[5, 1], &[1, 6]),
        ];
        assert_eq!(throttled_replicas(&moves, 0, true), "0:1,0:2,10:1,2:1,2:5");
        // Broker 1 is a destination of partition 2 and a source too: not a follower throttle.
        assert_eq!(throttled_replicas(&moves, 0, false), "0:3,10:4,2:6");
        assert_eq!(
            throttled_replicas(&moves, 1, true),
            "",
            "no move of topic 1"
        );
    }

    /// java.util.HashSet<String>'s order, worked by hand: "move".hashCode() = 3357649 =
    /// 0x333BD1, spread 0x333BD1 ^ 0x33 = 0x333BE2, bucket 2 of 16; "orders" 3286196965,
    /// bucket 10; "bar" 97299 = 0x17C13, 0x17C13 ^ 0x1 = 0x17C12, bucket 2 (after "move").
    #[test]
    fn topics_come_in_java_hash_set_order() {
        assert_eq!(java_hash_set_order(&["orders", "move"]), vec![1, 0]);
        assert_eq!(
            java_hash_set_order(&["move", "bar", "orders"]),
            vec![0, 1, 2]
        );
        assert_eq!(
            java_hash_set_order(&["orders", "bar", "move"]),
            vec![1, 2, 0]
        );
    }
}
