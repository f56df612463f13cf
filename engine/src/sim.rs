//! The scheduler: integer virtual time, one ordered event queue, one seeded generator.
//!
//! Everything that happens is [`Scheduled`] at a time: a message delivered, a broker's timer,
//! the controller's timer, a client's timer, or a scenario action. What is scheduled at the
//! same time runs in the order it was scheduled, so a run is a pure function of its scenario.
//! What happened, as the trace records it, is a typed [`crate::event::Event`].

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::broker::Broker;
use crate::client::{Consumer, ConsumerView, PartitionLeader, Producer, CONSUMER, PRODUCER};
use crate::config::Config;
use crate::controller::Controller;
use crate::effect::{node_ctx, ClientTimer, ControllerTimer, Effect, Observation, Scheduled};
use crate::error::ScenarioError;
use crate::event::{ElectionType, Event, Signal, SignalOutcome, Tool, ZoneAction};
use crate::metadata::{PartitionRegistration, Topics};
use crate::network::{Message, Network, Outstanding, Payload};
use crate::process::Process;
use crate::record_chunks::RecordChunks;
use crate::rng::Rng;
use crate::scenario::ProduceSpec;
use crate::scenario::{Action, Endpoint, Scenario, TimedAction};
use crate::snapshot::{Arrival, ArrivalOutcome, Loss, Metrics, TruncationRecord};
use crate::trace::{Trace, TraceEvent};
use crate::types::{BrokerId, Node, ProcessState, TimeMs, TopicPartition, Tp};
use crate::vec_map::VecMap;

/// An event in the queue. Ordered by (time, sequence) reversed, so the queue (a max-heap)
/// pops the earliest first and events at one time in the order they were scheduled.
#[derive(Debug, Clone)]
struct Queued {
    at: TimeMs,
    seq: u64,
    event: Scheduled,
}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Queued {}

/// The whole simulation.
#[derive(Debug)]
pub struct Sim {
    pub(crate) now: TimeMs,
    pub(crate) config: Config,
    /// The cluster's topics: names, topic ids, partition counts (fixed for the run, so
    /// clones share them).
    pub(crate) topics: Arc<Topics>,
    /// The partition the lane view and the one-partition read-outs show.
    pub(crate) view_tp: Tp,
    pub(crate) rng: Rng,
    /// The producer's sticky partitioner's draws (ThreadLocalRandom's part): a stream of its
    /// own, so that partitioning keyless records changes no other draw of the run.
    pub(crate) partitioner_rng: Rng,
    /// A version-2 record's value size when its produce gives none (`record_size_bytes`);
    /// `None` in version 1, whose records are their values' bytes.
    pub(crate) record_size: Option<u32>,
    /// The broker nodes, and what the operating system knows of each one's process.
    pub(crate) brokers: VecMap<BrokerId, Broker>,
    pub(crate) processes: VecMap<BrokerId, Process>,
    pub(crate) controller: Controller,
    pub(crate) network: Network,
    pub(crate) in_flight: VecMap<u64, Message>,
    /// Messages that reached a frozen broker and wait in its socket buffer.
    pub(crate) buffered: VecMap<u64, Message>,
    /// A heap, not a sorted map: it holds every pending timer and delivery (hundreds), and
    /// each step takes the earliest.
    queue: BinaryHeap<Queued>,
    next_seq: u64,
    next_message_id: u64,
    pub(crate) next_request_id: u64,
    pub(crate) producer: Producer,
    pub(crate) consumer: Consumer,
    /// The offsets (each with its partition) whose rewrite the engine's oracle told the
    /// consumer's reader of (`Sim::consumer_check_rewritten`): the simulator's memory, not the
    /// consumer's.
    pub(crate) consumer_rewrites_reported: crate::vec_map::VecSet<(Tp, u64)>,
    pub(crate) trace: Trace,
    pub(crate) metrics: Metrics,
    /// The scenario's timeline, sorted by time; never changes, so clones share it.
    timeline: Arc<[TimedAction]>,
    /// The next timeline action to run.
    timeline_cursor: usize,
    /// Each partition's committed history: records that some leader's HW has covered.
    /// Shared with clones, as the logs are (it grows as long as they do).
    pub(crate) committed: VecMap<Tp, RecordChunks>,
    pub(crate) losses: Vec<Loss>,
    /// The last truncations of every partition, oldest first, for the view.
    pub(crate) truncations: Vec<(Tp, TruncationRecord)>,
    pub(crate) seed: u64,
    /// The scenario's format version: a version-1 `describe` prints the one partition's
    /// line, a version-2 one the tool's output.
    pub(crate) format_version: u32,
    pub(crate) violations: Vec<String>,
    pub(crate) events_processed: u64,
    /// Check invariants after every event (tests and the UI turn this on).
    pub check_invariants: bool,
    /// With `check_invariants`: also check, after every event, that it changed nothing
    /// outside what the checker looked at again (`invariants::Scope`). For tests: it
    /// compares digests of the whole state twice per event.
    #[doc(hidden)]
    pub verify_invariant_scope: bool,
    /// Keep what became of each message that left the wire in the last
    /// [`ARRIVALS_KEPT_MS`] (the playground turns this on, to draw a message's path for a
    /// moment after it arrived: a 40 ms flight is two frames at 1×). Off, nothing is kept
    /// and nothing is computed.
    pub record_arrivals: bool,
    /// Oldest first, at most [`ARRIVALS_KEPT_MAX`] (64).
    pub(crate) arrivals: Vec<Arrival>,
    pub(crate) invariant_state: crate::invariants::InvariantState,
    /// What the running handler asked for, applied in push order when it returns
    /// ([`Sim::flush_effects`]). Empty between entry points; one buffer, reused.
    pub(crate) effects: Vec<Effect>,
}

/// Written out, not derived: a derived `clone` is `#[inline]`, so each crate that clones a
/// `Sim` (the engine's rewind, the web's playground) compiled a copy of its own (1.4 kB of
/// wasm each).
impl Clone for Sim {
    fn clone(&self) -> Self {
        Sim {
            now: self.now,
            config: self.config.clone(),
            topics: self.topics.clone(),
            view_tp: self.view_tp,
            rng: self.rng.clone(),
            partitioner_rng: self.partitioner_rng.clone(),
            record_size: self.record_size,
            brokers: self.brokers.clone(),
            processes: self.processes.clone(),
            controller: self.controller.clone(),
            network: self.network.clone(),
            in_flight: self.in_flight.clone(),
            buffered: self.buffered.clone(),
            queue: self.queue.clone(),
            next_seq: self.next_seq,
            next_message_id: self.next_message_id,
            next_request_id: self.next_request_id,
            producer: self.producer.clone(),
            consumer: self.consumer.clone(),
            consumer_rewrites_reported: self.consumer_rewrites_reported.clone(),
            trace: self.trace.clone(),
            metrics: self.metrics.clone(),
            timeline: self.timeline.clone(),
            timeline_cursor: self.timeline_cursor,
            committed: self.committed.clone(),
            losses: self.losses.clone(),
            truncations: self.truncations.clone(),
            seed: self.seed,
            format_version: self.format_version,
            violations: self.violations.clone(),
            events_processed: self.events_processed,
            check_invariants: self.check_invariants,
            verify_invariant_scope: self.verify_invariant_scope,
            record_arrivals: self.record_arrivals,
            arrivals: self.arrivals.clone(),
            invariant_state: self.invariant_state.clone(),
            effects: Vec::new(),
        }
    }
}

/// Most truncations remembered for the view.
pub const MAX_TRUNCATIONS: usize = 100;

/// How long [`Sim::record_arrivals`] keeps a message that left the wire, and the most it
/// keeps at once.
pub const ARRIVALS_KEPT_MS: TimeMs = 1_000;
const ARRIVALS_KEPT_MAX: usize = 64;

/// Most events a single `advance_to` may process before it stops (a guard against a
/// scenario that would spin; reaching it is reported in the trace).
pub const MAX_EVENTS_PER_ADVANCE: u64 = 50_000_000;

impl Sim {
    /// Builds a simulation from a scenario. The cluster starts running at time 0: every
    /// broker registered and unfenced, the topic created with the first replica as leader
    /// and every replica in the ISR, leader epoch 0.
    pub fn new(scenario: &Scenario) -> Result<Sim, ScenarioError> {
        scenario.validate()?;
        let mut config = scenario.config.clone();
        config.protocol = scenario.protocol;
        // The logs keep their appends' times only for a run that can lose power.
        config.track_writeback = scenario
            .timeline
            .iter()
            .any(|t| matches!(t.action, Action::PowerLoss { .. }));
        let specs = scenario.topic_specs();
        let mut names = Vec::with_capacity(specs.len());
        for spec in &specs {
            names.push((spec.name.clone(), spec.partitions));
        }
        let mut topics = Topics::new(scenario.seed, &names);
        topics.racks = scenario.racks.clone();
        let assignments = assign_replicas(scenario, &specs)?;
        let mut partitions = VecMap::new();
        for tp in topics.partitions() {
            let replicas = &assignments[usize::from(tp.topic)][usize::from(tp.partition)];
            let registration =
                PartitionRegistration::new(replicas.clone(), replicas.first().copied());
            partitions.insert(tp, registration);
        }
        for spec in &specs {
            topics
                .flush
                .push((spec.configs.flush_messages, spec.configs.flush_ms));
        }
        let mut min_isr = Vec::with_capacity(specs.len());
        for spec in &specs {
            min_isr.push(
                spec.configs
                    .min_insync_replicas
                    .unwrap_or(config.min_insync_replicas),
            );
        }
        let mut controller = Controller::new(partitions, min_isr);
        for (t, spec) in specs.iter().enumerate() {
            controller.topic_min_isr_set[t] = spec.configs.min_insync_replicas.is_some();
            controller.topic_unclean[t] = spec.configs.unclean_leader_election_enable;
        }
        let mut brokers = VecMap::new();
        let mut processes = VecMap::new();
        for id in 1..=scenario.brokers {
            let epoch = controller.register_at_start(id);
            brokers.insert(id, Broker::new(id, epoch, topics.partitions()));
            processes.insert(id, Process::running());
        }
        // ReplicationControlManager.createTopic: a TopicRecord, then a PartitionRecord per
        // partition (written on one line with the TopicRecord for partition 0).
        for (t, info) in topics.topics.iter().enumerate() {
            for (p, replicas) in assignments[t].iter().enumerate() {
                let ids = crate::types::Ids(replicas);
                let partition = format!("PartitionRecord(partitionId={p}, replicas=[{ids}], isr=[{ids}], leader={}, leaderEpoch=0, partitionEpoch=0)", replicas[0]);
                let text = if p == 0 {
                    format!("TopicRecord(name={}) {partition}", info.name)
                } else {
                    format!("{} {partition}", info.name)
                };
                let kind = if p == 0 {
                    "TopicRecord"
                } else {
                    "PartitionRecord"
                };
                controller.append(0, kind, text);
            }
        }
        let committed = topics
            .partitions()
            .map(|tp| (tp, RecordChunks::default()))
            .collect();
        // Timeline actions run in time order (listed order within one time), each after every
        // event at its time, exactly as a person's input applied at that moment would.
        let mut timeline = scenario.timeline.clone();
        crate::scenario::sort_timeline(&mut timeline);
        let mut sim = Sim {
            now: 0,
            config,
            topics: Arc::new(topics),
            view_tp: Tp::default(),
            rng: Rng::new(scenario.seed),
            partitioner_rng: Rng::new(scenario.seed ^ PARTITIONER_STREAM),
            record_size: (scenario.version >= 2).then(|| {
                scenario
                    .record_size_bytes
                    .unwrap_or(crate::scenario::DEFAULT_RECORD_SIZE_BYTES)
            }),
            brokers,
            processes,
            controller,
            network: Network::default(),
            in_flight: VecMap::new(),
            buffered: VecMap::new(),
            queue: BinaryHeap::new(),
            next_seq: 0,
            next_message_id: 0,
            next_request_id: 0,
            producer: Producer::default(),
            consumer: Consumer {
                client_rack: scenario.client_rack.clone(),
                ..Consumer::default()
            },
            consumer_rewrites_reported: Default::default(),
            trace: Trace::default(),
            metrics: Metrics::default(),
            timeline: timeline.into(),
            timeline_cursor: 0,
            committed,
            losses: vec![],
            truncations: vec![],
            seed: scenario.seed,
            format_version: scenario.version,
            violations: vec![],
            events_processed: 0,
            check_invariants: false,
            verify_invariant_scope: false,
            record_arrivals: false,
            arrivals: Default::default(),
            invariant_state: crate::invariants::InvariantState {
                protocol: scenario.protocol,
                ..Default::default()
            },
            effects: Vec::new(),
        };
        for link in &scenario.links {
            sim.network.latency_overrides.insert(
                crate::types::link(link.a.node(), link.b.node()),
                link.latency_ms,
            );
        }
        // Brokers apply the initial metadata and start their periodic tasks.
        let image = Arc::new(sim.controller.image());
        let ids: Vec<BrokerId> = sim.brokers.keys().copied().collect();
        for b in &ids {
            sim.brokers[b].form(&mut node_ctx!(sim), image.clone());
            sim.schedule_session_check(*b);
        }
        sim.schedule_at(
            sim.config.unclean_election_interval_ms,
            Scheduled::Controller(ControllerTimer::UncleanElection),
        );
        if !scenario.protocol.is_default() {
            sim.emit(Event::ProtocolMode {
                protocol: scenario.protocol,
            });
        }
        for (t, spec) in specs.iter().enumerate() {
            sim.emit(Event::TopicCreated {
                topic: spec.name.clone(),
                replicas: assignments[t][0].clone(),
                brokers: scenario.brokers,
                min_insync_replicas: sim.controller.min_insync_replicas[t],
                partitions: spec.partitions,
            });
        }
        sim.flush_effects();
        Ok(sim)
    }

    // ---- time and events -------------------------------------------------------------

    pub fn now(&self) -> TimeMs {
        self.now
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Keeps the logs' append times for a power loss from now on, whatever the timeline
    /// holds (`Sim::new` keeps them only when it has a `power_loss`): the playground, where
    /// a person may cut the power at any moment. They are read only by a power loss, so a
    /// run with them kept prints and draws exactly what it would without.
    pub fn track_writeback(&mut self) {
        self.config.track_writeback = true;
    }

    /// The cluster's partitions, topic by topic in creation order.
    pub fn partitions(&self) -> Vec<TopicPartition> {
        let mut out = Vec::new();
        for tp in self.topics.partitions() {
            out.push(self.topics.name(tp).clone());
        }
        out
    }

    /// The partition the lane view ([`Sim::snapshot`]) and the one-partition read-outs
    /// show (the first, unless chosen).
    /// The consumer's `client.rack` now (KIP-392), if it has one.
    pub fn client_rack(&self) -> Option<&str> {
        self.consumer.client_rack.as_deref()
    }

    /// The value size of a record whose produce gives none (`record_size_bytes`, changed by
    /// `set_config`); `None` in version 1, whose records are their values' bytes.
    pub fn record_size_bytes(&self) -> Option<u32> {
        self.record_size
    }

    /// The number the producer gives its next produce's first job (one per partition a
    /// produce's records went to): with [`Sim::produce_partitions_from`], where a produce
    /// sent its records.
    pub fn next_produce_job(&self) -> u64 {
        self.producer.next_job
    }

    /// The partitions the producer's jobs from `first` on send to, each with its records,
    /// in the order of their first batch (KafkaProducer.partition's choice: the partition
    /// named, the key's, or the sticky partitioner's). A job done since is left out.
    pub fn produce_partitions_from(&self, first: u64) -> Vec<(TopicPartition, usize)> {
        let mut out: Vec<(TopicPartition, usize)> = Vec::new();
        for (&id, job) in self.producer.jobs.iter() {
            if id < first {
                continue;
            }
            // `pending` holds the next batch last.
            for (tp, values) in job.pending.iter().rev() {
                let name = self.topics.name(*tp);
                match out.iter_mut().find(|(t, _)| t == name) {
                    Some((_, n)) => *n += values.len(),
                    None => out.push((name.clone(), values.len())),
                }
            }
        }
        out
    }

    pub fn view_partition(&self) -> &TopicPartition {
        self.topics.name(self.view_tp)
    }

    /// Shows partition `topic`-`partition` in the lane view and the one-partition
    /// read-outs from now on. The run itself does not change.
    pub fn set_view_partition(&mut self, topic: &str, partition: u32) -> Result<(), ScenarioError> {
        match self.topics.find(topic, partition) {
            Some(tp) => {
                self.view_tp = tp;
                Ok(())
            }
            None => Err(ScenarioError::new(
                "partition",
                format!("no partition {topic}-{partition} in this cluster"),
            )),
        }
    }

    /// The time of the next event, if any.
    pub fn next_event_time(&self) -> Option<TimeMs> {
        let event = self.queue.peek().map(|q| q.at);
        let action = self
            .timeline
            .get(self.timeline_cursor)
            .map(|a| a.at.max(self.now));
        match (event, action) {
            (Some(e), Some(a)) => Some(e.min(a)),
            (e, a) => e.or(a),
        }
    }

    /// Asks for `event` to be queued at `at` (an effect, applied when the handler returns).
    pub(crate) fn schedule_at(&mut self, at: TimeMs, event: Scheduled) {
        self.effects.push(Effect::SetTimer {
            at,
            scheduled: event,
        });
    }

    /// Queues `event` at `at` (never before now) under the next sequence number, at once:
    /// what applying a timer or a send does.
    fn queue_push(&mut self, at: TimeMs, event: Scheduled) {
        let at = at.max(self.now);
        self.queue.push(Queued {
            at,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }

    /// Applies the effects the handlers pushed, in the order they were pushed: the one place
    /// that sends, queues and records. Applying draws from the generator and takes message
    /// ids and sequence numbers in that order, as the calls did when each acted at once.
    /// Applying pushes nothing (a send's connection reset is put on the wire directly).
    pub(crate) fn flush_effects(&mut self) {
        if self.effects.is_empty() {
            return;
        }
        let mut effects = std::mem::take(&mut self.effects);
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { from, to, payload } => self.transmit(from, to, payload),
                Effect::SetTimer { at, scheduled } => self.queue_push(at, scheduled),
                Effect::SetTimerWithPhase {
                    at,
                    max_phase,
                    scheduled,
                } => {
                    let phase = self.rng.below_or_equal(max_phase);
                    self.queue_push(at + phase, scheduled);
                }
                Effect::SetTimerJittered {
                    at,
                    max_phase,
                    at_most,
                    scheduled,
                } => {
                    let phase = self.rng.below_or_equal(max_phase);
                    self.queue_push((at + phase).min(at_most), scheduled);
                }
                Effect::Emit(event) => self.trace.push(self.now, event),
                Effect::Observe(observation) => self.observe(observation),
                Effect::Exit { broker } => self.exit(broker),
            }
        }
        debug_assert!(self.effects.is_empty(), "applying an effect pushed one");
        // Put the (empty) buffer back, so the next handler pushes without allocating.
        self.effects = effects;
    }

    /// Processes the next event. Returns false when there is none.
    pub fn step(&mut self) -> bool {
        let next_event = self.queue.peek().map(|q| q.at);
        let next_action = self
            .timeline
            .get(self.timeline_cursor)
            .map(|a| a.at.max(self.now));
        let mut scope = crate::invariants::Scope::All;
        // Tests only: not in the wasm the playground ships.
        #[cfg(not(target_arch = "wasm32"))]
        let before = (self.check_invariants && self.verify_invariant_scope).then(|| {
            crate::invariants::Digest::of(&self.controller, &self.brokers, &self.processes)
        });
        match (next_event, next_action) {
            // An action at time t runs after every event at t.
            (Some(at), Some(action_at)) if action_at < at => self.run_timeline_action(),
            (None, Some(_)) => self.run_timeline_action(),
            (Some(_), _) => {
                let Some(q) = self.queue.pop() else {
                    return false;
                };
                self.now = q.at;
                scope = self.scope_of(&q.event);
                self.dispatch(q.event);
            }
            (None, None) => return false,
        }
        self.flush_effects();
        self.events_processed += 1;
        if self.check_invariants {
            // After a node's event the checker looks again only at what that node may have
            // changed.
            self.check_scope(scope);
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(before) = before {
            let after =
                crate::invariants::Digest::of(&self.controller, &self.brokers, &self.processes);
            let checked = &self.invariant_state.checked;
            let outside = before.outside(&after, scope, &self.topics, &self.controller, checked);
            for what in outside {
                self.record_violation(what);
            }
        }
        // What the last check looked at matters only within its step (to the verifier
        // above): emptied, so that a state rebuilt by `Rewind` equals the live one.
        self.invariant_state.checked.clear();
        true
    }

    /// Checks every invariant now, everywhere, as after a timeline action. A rebuild
    /// (`Rewind`) replays history the live run already checked event by event without
    /// checking it again, then calls this: the checker's memory (epochs, each leadership's
    /// highest HW, the replicas' fingerprints) is then what the live run's was, because each
    /// is a function of the state the live run checked after every change.
    pub(crate) fn check_invariants_now(&mut self) {
        self.check_scope(crate::invariants::Scope::All);
        self.invariant_state.checked.clear();
    }

    /// The checker reads the nodes; what it finds is recorded here.
    fn check_scope(&mut self, scope: crate::invariants::Scope) {
        let found = self.invariant_state.check(
            scope,
            &self.topics,
            &self.controller,
            &self.brokers,
            &self.processes,
        );
        for what in found {
            self.record_violation(what);
        }
    }

    /// What an event can change, for the invariant checker: the node that runs it (a
    /// message to a client, or a client's timer, changes nothing it reads).
    fn scope_of(&self, event: &Scheduled) -> crate::invariants::Scope {
        use crate::invariants::Scope;
        let to = match event {
            Scheduled::Deliver { message_id } => {
                match self
                    .in_flight
                    .get(message_id)
                    .or(self.buffered.get(message_id))
                {
                    Some(m) => m.to,
                    None => return Scope::All,
                }
            }
            Scheduled::Broker { broker, .. } => Node::Broker(*broker),
            Scheduled::Controller(_) => Node::Controller,
            Scheduled::Client(_) => return Scope::Nothing,
        };
        match to {
            Node::Broker(b) => Scope::Broker(b),
            Node::Controller => Scope::Controller,
            Node::Client(_) => Scope::Nothing,
        }
    }

    fn run_timeline_action(&mut self) {
        let Some(a) = self.timeline.get(self.timeline_cursor).cloned() else {
            return;
        };
        self.timeline_cursor += 1;
        self.now = self.now.max(a.at);
        if let Err(e) = self.apply_action(&a.action) {
            self.emit(Event::ActionRejected {
                error: e.to_string(),
            });
        }
    }

    /// Processes every event up to and including time `t`, then sets the clock to `t`.
    pub fn advance_to(&mut self, t: TimeMs) {
        let mut n = 0;
        while let Some(next) = self.next_event_time() {
            if next > t || n >= MAX_EVENTS_PER_ADVANCE {
                break;
            }
            self.step();
            n += 1;
        }
        if t > self.now {
            self.now = t;
        }
    }

    /// Timeline actions not run yet, in the order they will run.
    pub fn pending_timeline(&self) -> impl Iterator<Item = &TimedAction> {
        self.timeline[self.timeline_cursor.min(self.timeline.len())..].iter()
    }

    fn dispatch(&mut self, event: Scheduled) {
        match event {
            Scheduled::Deliver { message_id } => self.deliver(message_id),
            Scheduled::Broker {
                broker,
                incarnation,
                timer,
            } => {
                let Some(process) = self.processes.get_mut(&broker) else {
                    return;
                };
                if process.incarnation != incarnation || !process.is_up() {
                    return;
                }
                if process.state == ProcessState::Frozen {
                    process.deferred.push(Scheduled::Broker {
                        broker,
                        incarnation,
                        timer,
                    });
                    return;
                }
                let node = &mut self.brokers[&broker];
                debug_assert_eq!(node.incarnation, incarnation, "the node is its process's");
                node.on_timer(&mut node_ctx!(self), timer);
            }
            Scheduled::Controller(t) => self.controller_timer(t),
            Scheduled::Client(t) => self.client_timer(t),
        }
    }

    // ---- the controller: the simulator's side -------------------------------------------
    //
    // It delivers the controller's messages, fires its timers and hands it the tools'
    // requests, each with a `Ctx` over the simulator's own fields (`node_ctx!`), and says which
    // brokers a metadata push reaches.

    /// The brokers a metadata push reaches: those whose process is up and has registered.
    ///
    /// A simplification that remains: Kafka's brokers fetch the metadata log; here the
    /// controller pushes its image, and only to these. Whether a broker's process is up and
    /// whether it has registered are the broker's state, not the controller's, so the
    /// simulator computes the list. (Sending to every broker and letting the network drop
    /// what a dead process cannot read would be the same for a process that is down, where
    /// nothing is drawn; but a process that is up and still registering would receive the
    /// push, with a jitter draw and a sequence number, and every run would change.)
    pub(crate) fn metadata_audience(&self) -> Vec<BrokerId> {
        let mut ids = Vec::new();
        for b in self.brokers.values() {
            if self.processes[&b.id].is_up() && b.registered {
                ids.push(b.id);
            }
        }
        ids
    }

    /// Delivers a message to the controller.
    pub(crate) fn controller_receive(&mut self, from: Node, payload: Payload) {
        let audience = self.metadata_audience();
        self.controller.on_message(
            &mut crate::effect::node_ctx!(self),
            from,
            payload,
            &audience,
        );
    }

    /// Fires a controller timer.
    pub(crate) fn controller_timer(&mut self, timer: ControllerTimer) {
        let audience = self.metadata_audience();
        self.controller
            .on_timer(&mut crate::effect::node_ctx!(self), timer, &audience);
    }

    /// kafka-leader-election.sh for every partition (`--all-topic-partitions`), in index
    /// order: each partition's outcome.
    pub(crate) fn controller_elect(
        &mut self,
        election: crate::controller::Election,
        cause: crate::controller::ChangeCause,
    ) -> Vec<(Tp, crate::types::ErrorCode)> {
        let audience = self.metadata_audience();
        let mut out = Vec::new();
        for tp in self.topics.partitions() {
            let error = self.controller.on_elect_leader(
                &mut crate::effect::node_ctx!(self),
                tp,
                election,
                cause,
                &audience,
            );
            out.push((tp, error));
        }
        out
    }

    /// kafka-configs.sh set min.insync.replicas (already in `self.config`).
    pub(crate) fn controller_set_min_isr(&mut self) {
        let audience = self.metadata_audience();
        self.controller
            .on_min_isr_set(&mut crate::effect::node_ctx!(self), &audience);
    }

    /// Queues broker `b`'s session check (at the simulation's start).
    pub(crate) fn schedule_session_check(&mut self, b: BrokerId) {
        Controller::set_session_check(&mut crate::effect::node_ctx!(self), b);
    }

    // ---- network ---------------------------------------------------------------------

    fn latency(&mut self, from: Node, to: Node) -> u64 {
        let base = match self
            .network
            .latency_overrides
            .get(&crate::types::link(from, to))
        {
            Some(&l) => l,
            None if from == Node::Controller || to == Node::Controller => {
                self.config.controller_latency_ms
            }
            None => self.config.network_latency_ms,
        };
        let jitter = if self.config.network_jitter_ms > 0 {
            self.rng.below_or_equal(self.config.network_jitter_ms)
        } else {
            0
        };
        base + jitter
    }

    /// Applies an [`Effect::Send`]: the message is lost at once if its link is cut. A
    /// request to a broker whose process is down (killed or stopped, its machine still up)
    /// finds nothing listening: the connection is refused, and the sender learns it after a
    /// round trip. Otherwise it goes on the wire after the link's latency and jitter.
    fn transmit(&mut self, from: Node, to: Node, payload: Payload) {
        if self.network.is_cut(from, to) {
            return;
        }
        if let Node::Broker(d) = to {
            if self.processes.get(&d).is_none_or(|x| !x.is_up()) {
                if let Some(request) = payload.outstanding() {
                    let there = self.latency(from, to);
                    self.send_reset(to, from, request, there);
                }
                return;
            }
        }
        let delay = self.latency(from, to);
        self.enqueue(from, to, payload, delay);
    }

    /// Puts a message on the wire, to arrive after `delay`.
    fn enqueue(&mut self, from: Node, to: Node, payload: Payload, delay: u64) -> u64 {
        let id = self.next_message_id;
        self.next_message_id += 1;
        let to_incarnation = match to {
            Node::Broker(d) => self.processes.get(&d).map_or(0, |x| x.incarnation),
            _ => 0,
        };
        // FIFO per connection (one TCP connection per directed link and receiving process):
        // not before the previous message on it. A restarted broker is reached over a new
        // connection, which does not wait behind messages sent to its previous process.
        // Events at the same time run in the order they were scheduled, so equal times keep
        // the order too.
        // (The latest delivery on the link is found among the messages in flight, a few dozen:
        // a map of links would be more code in the wasm.)
        let last = self
            .in_flight
            .values()
            .filter(|m| m.from == from && m.to == to && m.to_incarnation == to_incarnation)
            .map(|m| m.deliver_at)
            .max()
            .unwrap_or(0);
        let deliver_at = (self.now + delay).max(last);
        let msg = Message {
            id,
            from,
            to,
            sent_at: self.now,
            deliver_at,
            payload,
            to_incarnation,
        };
        self.queue_push(msg.deliver_at, Scheduled::Deliver { message_id: id });
        self.in_flight.insert(id, msg);
        id
    }

    /// The operating system of `from`'s machine resets the connection of `request` to `to`,
    /// `extra` ms after now (plus the latency back).
    fn send_reset(&mut self, from: Node, to: Node, request: Outstanding, extra: u64) {
        if self.network.is_cut(from, to) {
            return; // the RST is lost too: the requester finds out by its own timeout
        }
        let delay = extra + self.latency(from, to);
        self.enqueue(from, to, Payload::ConnectionReset { request }, delay);
    }

    /// Broker `b`'s process is gone (kill -9, a lost disk, a finished shutdown) while its
    /// machine keeps running: the kernel resets every connection to it, so every request
    /// that waits on one (a follower's fetch, the producer's batch, the consumer's fetch)
    /// fails at once, not after a timeout. A frozen process keeps its sockets open instead.
    ///
    /// The kernel's doing, not a node's rule: the resets go on the wire at once, after what
    /// the handlers asked for so far (as when each send acted at once).
    fn reset_connections(&mut self, b: BrokerId) {
        self.flush_effects();
        let mut resets: Vec<(Node, Outstanding)> = vec![];
        for f in self.brokers.values() {
            for (&(leader, fetcher_id), thread) in &f.fetcher.threads {
                if let (Some(fetch_id), true) = (thread.in_flight, leader == b && f.id != b) {
                    let request = Outstanding::Fetch {
                        fetcher_id,
                        fetch_id,
                    };
                    resets.push((Node::Broker(f.id), request));
                }
            }
        }
        for job in self.producer.jobs.values() {
            if let Some(a) = &job.current {
                if let (Some(request_id), Some(target)) = (a.request_id, a.target) {
                    if target == b && job.acks != crate::types::Acks::Zero {
                        resets.push((crate::client::PRODUCER, Outstanding::Produce { request_id }));
                    }
                }
            }
        }
        for (&request_id, r) in &self.consumer.requests {
            if r.target == b {
                resets.push((
                    crate::client::CONSUMER,
                    Outstanding::ConsumerFetch { request_id },
                ));
            }
        }
        for (to, request) in resets {
            self.send_reset(Node::Broker(b), to, request, 0);
        }
    }

    fn deliver(&mut self, id: u64) {
        let Some(msg) = self.in_flight.remove(&id) else {
            return;
        };
        let seen = self.record_arrivals.then(|| msg.snapshot(false));
        if let (Some(outcome), Some(message)) = (self.deliver_message(id, msg), seen) {
            self.note_arrival(message, outcome);
        }
    }

    /// Hands a message that reached the end of its link to its destination, and says what
    /// became of it (`None`: it waits in a frozen broker's socket buffer).
    fn deliver_message(&mut self, id: u64, msg: Message) -> Option<ArrivalOutcome> {
        if self.network.is_cut(msg.from, msg.to) {
            return Some(ArrivalOutcome::LinkCut);
        }
        match msg.to {
            Node::Broker(b) => {
                let process = self.processes.get_mut(&b)?;
                if process.incarnation != msg.to_incarnation {
                    // Sent to a process that has ended: its connections died with it (the
                    // requester was told by the reset), and a new process never reads them.
                    return Some(ArrivalOutcome::ProcessGone);
                }
                match process.state {
                    ProcessState::Killed | ProcessState::Stopped => {
                        return Some(ArrivalOutcome::ProcessGone)
                    }
                    ProcessState::Frozen => {
                        process.deferred.push(Scheduled::Deliver { message_id: id });
                        self.buffered.insert(id, msg);
                        return None;
                    }
                    ProcessState::Running => {
                        let node = &mut self.brokers[&b];
                        debug_assert_eq!(node.incarnation, msg.to_incarnation);
                        node.on_message(&mut node_ctx!(self), msg.from, msg.payload);
                    }
                }
            }
            Node::Controller => self.controller_receive(msg.from, msg.payload),
            Node::Client(_) => self.client_receive(msg.to, msg.payload),
        }
        Some(ArrivalOutcome::Received)
    }

    /// Keeps `message`'s arrival for the view, and forgets those older than
    /// [`ARRIVALS_KEPT_MS`] or beyond the most kept.
    fn note_arrival(&mut self, message: crate::snapshot::MessageSnapshot, outcome: ArrivalOutcome) {
        let now = self.now;
        while self.arrivals.len() >= ARRIVALS_KEPT_MAX
            || self
                .arrivals
                .first()
                .is_some_and(|a| a.at + ARRIVALS_KEPT_MS < now)
        {
            self.arrivals.remove(0);
        }
        self.arrivals.push(Arrival {
            message,
            at: now,
            outcome,
        });
    }

    // ---- broker processes ----------------------------------------------------------------

    /// replica.lag.time.max.ms changed: every broker whose process is up (running or frozen)
    /// drops the isr-expiration task it scheduled at the old period and starts one at the new
    /// period, as if it had been restarted with the new value. Brokers that are down pick the
    /// value up when they start. Brokers are visited in id order (a sorted map), so the
    /// generator's draws, and the whole run, stay deterministic.
    ///
    /// Kafka itself cannot do this: `replica.lag.time.max.ms` is a static (read-only) broker
    /// config. ReplicaManager.startup schedules "isr-expiration" once, with period
    /// `config.replicaLagTimeMaxMs / 2`. DynamicBrokerConfig.validateConfigs throws "Cannot
    /// update these configs dynamically" for any name in `DynamicConfig.Broker.nonDynamicProps`
    /// (every KafkaConfig name outside `DynamicBrokerConfig.AllDynamicConfigs`), and the only
    /// replication config in that set is `follower.fetch.last.tiered.offset.enable`
    /// (`DynamicReplicationConfig.ReconfigurableConfigs`), per apache/kafka trunk,
    /// core/src/main/scala/kafka/server/{DynamicBrokerConfig,ReplicaManager}.scala. Changing
    /// it takes a rolling restart; the playground applies it on every broker at once.
    fn restart_isr_expiration_tasks(&mut self) {
        for b in self.broker_ids_where(&|_, process| process.is_up()) {
            self.brokers[&b].restart_isr_expiration(&mut node_ctx!(self));
        }
    }

    /// The ids of the brokers for which `keep` holds, in id order (one function for the
    /// engine's broker filters, the predicate through `dyn`).
    #[inline(never)]
    pub(crate) fn broker_ids_where(
        &self,
        keep: &dyn Fn(&Broker, &Process) -> bool,
    ) -> Vec<BrokerId> {
        let mut out = Vec::new();
        for broker in self.brokers.values() {
            if keep(broker, &self.processes[&broker.id]) {
                out.push(broker.id);
            }
        }
        out
    }

    /// Broker `b`'s process exits at the end of its controlled shutdown (the node's last
    /// effect, after what it sent on its way out): the process is stopped, and the kernel
    /// resets its connections.
    fn exit(&mut self, b: BrokerId) {
        self.processes[&b].state = ProcessState::Stopped;
        self.clear_process_memory(b);
        self.reset_connections(b);
    }

    /// What a process loses when it ends: everything but the disk.
    /// A fault of the machine (a lost disk, a power loss) ends broker `b`'s process if it
    /// runs, as kill -9 does; whether it ran (its connections then reset).
    fn end_process_of_machine_fault(&mut self, b: BrokerId) -> bool {
        let was_up = self.processes[&b].is_up();
        if was_up {
            self.flush_effects(); // the process ends: what it sent goes out first
            self.processes[&b].state = ProcessState::Killed;
            self.clear_process_memory(b);
        }
        was_up
    }

    fn clear_process_memory(&mut self, b: BrokerId) {
        let mut ids: Vec<u64> = Vec::new();
        for (id, m) in &self.buffered {
            if m.to == Node::Broker(b) {
                ids.push(*id);
            }
        }
        for id in ids {
            if let Some(msg) = self.buffered.remove(&id) {
                if self.record_arrivals {
                    let message = msg.snapshot(true);
                    self.note_arrival(message, ArrivalOutcome::ProcessGone);
                }
            }
        }
        let process = &mut self.processes[&b];
        process.incarnation += 1;
        process.deferred.clear();
        process.frozen_since = None;
        process.pending_sigterm = false;
        self.brokers[&b].lose_memory();
    }

    fn start(&mut self, b: BrokerId) {
        // A new process: what was sent before it started was sent to the old one.
        self.flush_effects();
        let process = &mut self.processes[&b];
        process.state = ProcessState::Running;
        process.incarnation += 1;
        let incarnation = process.incarnation;
        self.brokers[&b].start(&mut node_ctx!(self), incarnation);
    }

    // ---- observers -------------------------------------------------------------------------

    /// Applies an [`Effect::Observe`]: the simulator's observers read the nodes and record
    /// what they find (the committed history, losses, broken invariants, truncations).
    fn observe(&mut self, observation: Observation) {
        match observation {
            Observation::HighWatermark {
                tp,
                broker,
                leader_epoch,
                high_watermark,
            } => crate::history::on_high_watermark(
                &mut self.committed[&tp],
                &self.controller,
                tp,
                broker,
                leader_epoch,
                self.brokers[&broker].log(tp),
                high_watermark,
            ),
            Observation::NewLeader {
                tp,
                broker,
                leader_epoch,
                recovering,
            } => {
                let found = crate::history::on_new_leader(
                    &mut self.committed[&tp],
                    &self.controller,
                    &self.processes,
                    tp,
                    broker,
                    leader_epoch,
                    recovering,
                    self.brokers[&broker].log(tp),
                    self.now,
                    self.topics.label(tp),
                    self.config.protocol,
                );
                if let Some(found) = found {
                    if let Some(what) = found.violation {
                        let what = format!("{}: {what}", self.topics.name(tp));
                        self.record_violation(what);
                    }
                    self.trace.push(self.now, found.event);
                    self.losses.push(found.loss);
                }
            }
            Observation::LeaderAppend {
                tp,
                broker,
                first,
                last,
            } => {
                if self.check_invariants {
                    let log = self.brokers[&broker].log(tp);
                    if let Some(what) =
                        crate::invariants::duplicate_append(log, broker, first, last)
                    {
                        let what = format!("{}: {what}", self.topics.name(tp));
                        self.record_violation(what);
                    }
                }
            }
            Observation::Truncated(tp, t) => {
                self.truncations.push((tp, t));
                if self.truncations.len() > MAX_TRUNCATIONS * self.committed.len() {
                    self.truncations.remove(0);
                }
            }
        }
    }

    /// Records a broken invariant (at most [`crate::invariants::MAX_VIOLATIONS`], each once)
    /// in `violations` and in the trace, now.
    fn record_violation(&mut self, what: String) {
        if self.violations.len() >= crate::invariants::MAX_VIOLATIONS
            || self
                .violations
                .iter()
                .any(|v| v.starts_with(&format!("invariant broken: {what} (")))
        {
            return;
        }
        let event = Event::InvariantBroken {
            what,
            seed: self.seed,
            at_ms: self.now,
        };
        self.violations.push(event.to_string());
        self.trace.push(self.now, event);
    }

    /// `kafka-get-offsets.sh` now.
    pub(crate) fn offsets_line(&self) -> String {
        self.offsets_line_of(self.view_tp)
    }

    /// The partitions a read-out names: `topic`-`partition` (the first topic when only a
    /// partition is named), every partition of `topic`, or every partition; none when the
    /// cluster has no such partition (validation refuses it in a scenario).
    fn readout_partitions(&self, topic: Option<&str>, partition: Option<u32>) -> Vec<Tp> {
        let first = &self.topics.topics[0].name;
        if let Some(p) = partition {
            return self
                .topics
                .find(topic.unwrap_or(first), p)
                .into_iter()
                .collect();
        }
        let mut out = Vec::new();
        for tp in self.topics.partitions() {
            if topic.is_none_or(|t| self.topics.name(tp).topic == t) {
                out.push(tp);
            }
        }
        out
    }

    /// `kafka-get-offsets.sh --topic T --partitions P` now.
    pub(crate) fn offsets_line_of(&self, tp: Tp) -> String {
        crate::describe::offsets_line(
            tp,
            self.topics.name(tp),
            self.controller.partition(tp),
            &self.brokers,
            &self.processes,
        )
    }

    // ---- trace -----------------------------------------------------------------------

    /// Records what happened, now.
    ///
    /// An effect: it reaches the trace, at this time, when the handler's effects are applied.
    pub(crate) fn emit(&mut self, event: Event) {
        self.effects.push(Effect::Emit(event));
    }

    /// Trace events since `cursor` (at most `limit`), and the next cursor.
    pub fn trace_since(&self, cursor: u64, limit: usize) -> (Vec<TraceEvent>, u64) {
        self.trace.since(cursor, limit)
    }

    /// The cursor just past the newest trace event.
    pub fn trace_next_seq(&self) -> u64 {
        self.trace.next_seq()
    }

    /// The whole transcript kept in memory, one line per event.
    pub fn transcript(&self) -> Vec<String> {
        // Loops, not a map over the flattened chunks collected (its body compiled twice).
        let mut out = Vec::with_capacity(self.trace.len());
        for k in 0..self.trace.slice_count() {
            for e in self.trace.slice(k) {
                out.push(e.line());
            }
        }
        out
    }

    /// The trace events kept in memory, oldest first (`.rev()` reads the newest first).
    pub fn trace_events(&self) -> impl DoubleEndedIterator<Item = &TraceEvent> {
        self.trace.iter()
    }

    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    pub fn violations(&self) -> &[String] {
        &self.violations
    }

    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    // ---- inputs ------------------------------------------------------------------------

    /// Applies an input now (from the UI, or from the scenario timeline).
    pub fn apply_now(&mut self, action: &Action) -> Result<(), ScenarioError> {
        let r = self.apply_action(action);
        self.flush_effects();
        // An input may change anything a timeline action may: checked as one is, everywhere
        // (before, a killed broker's replicas went unchecked until its next event).
        if self.check_invariants {
            self.check_invariants_now();
        }
        r
    }

    /// Runs an input's handler; its effects wait in the buffer for the caller to apply.
    fn apply_action(&mut self, action: &Action) -> Result<(), ScenarioError> {
        action.validate("action", self.brokers.len() as u32)?;
        let now = self.now;
        match action {
            Action::Produce(spec) => {
                let tp = self.target(action)?;
                self.client_produce(spec, tp);
            }
            Action::Consume {
                max_records,
                from_beginning,
                ..
            } => {
                let tp = self.target(action)?;
                self.client_consume(*max_records, *from_beginning, tp);
            }
            Action::Freeze { broker } => {
                let p = &mut self.processes[broker];
                if p.state == ProcessState::Running {
                    p.state = ProcessState::Frozen;
                    p.frozen_since = Some(now);
                    self.note_signal(Signal::Stop, *broker, SignalOutcome::Done);
                } else {
                    self.note_signal(Signal::Stop, *broker, SignalOutcome::NotRunning);
                }
            }
            Action::Thaw { broker } => self.thaw(*broker),
            Action::Kill { broker } => {
                if self.processes[broker].is_up() {
                    self.flush_effects(); // the process ends: what it sent goes out first
                    self.processes[broker].state = ProcessState::Killed;
                    self.clear_process_memory(*broker);
                    self.note_signal(Signal::Kill, *broker, SignalOutcome::Done);
                    self.reset_connections(*broker);
                } else {
                    self.note_signal(Signal::Kill, *broker, SignalOutcome::NotRunning);
                }
            }
            Action::Stop { broker } => {
                let p = &mut self.processes[broker];
                match p.state {
                    ProcessState::Running if !self.brokers[broker].shutting_down => {
                        self.note_signal(Signal::Term, *broker, SignalOutcome::Done);
                        self.brokers[broker].on_sigterm(&mut node_ctx!(self));
                    }
                    ProcessState::Frozen => {
                        p.pending_sigterm = true;
                        self.note_signal(Signal::Term, *broker, SignalOutcome::WaitsForThaw);
                    }
                    _ => self.note_signal(Signal::Term, *broker, SignalOutcome::NotRunning),
                }
            }
            Action::Start { broker } => {
                if self.processes[broker].is_up() {
                    self.note_signal(Signal::Start, *broker, SignalOutcome::AlreadyRunning);
                } else {
                    self.note_signal(Signal::Start, *broker, SignalOutcome::Done);
                    self.start(*broker);
                }
            }
            Action::Slow { broker, ms } => {
                self.brokers[broker].set_slow(*ms);
                self.emit(Event::Slowed {
                    broker: *broker,
                    ms: *ms,
                });
            }
            Action::Cut { a, b } => {
                self.flush_effects(); // what was sent before the cut was checked before it
                self.network
                    .cut
                    .insert(crate::types::link(a.node(), b.node()));
                self.emit(Event::Link {
                    a: a.node(),
                    b: b.node(),
                    cut: true,
                });
            }
            Action::Heal { a, b } => {
                self.flush_effects(); // what was sent before the heal was checked before it
                self.network
                    .cut
                    .remove(&crate::types::link(a.node(), b.node()));
                self.emit(Event::Link {
                    a: a.node(),
                    b: b.node(),
                    cut: false,
                });
            }
            Action::LoseDisk { broker } => {
                let was_up = self.end_process_of_machine_fault(*broker);
                self.brokers[broker].lose_disk();
                self.processes[broker].disk_lost = true;
                self.emit(Event::DiskLost { broker: *broker });
                if was_up {
                    self.reset_connections(*broker);
                }
            }
            Action::PowerLoss { broker } => {
                let was_up = self.end_process_of_machine_fault(*broker);
                self.processes[broker].power_lost = true;
                self.emit(Event::PowerLost {
                    broker: *broker,
                    writeback_delay_ms: self.config.writeback_delay_ms,
                });
                self.brokers[broker].lose_power(&mut node_ctx!(self));
                self.flush_effects();
                // The machine is off, so no kernel answers for it; the engine's network
                // resets its connections as after kill -9 (docs/history.md, "Power loss").
                if was_up {
                    self.reset_connections(*broker);
                }
            }
            // KIP-392: the consumer's client.rack, a config of the consumer (ConsumerConfig
            // CLIENT_RACK_CONFIG) fixed when it is built; setting it stands for a new consumer
            // in that rack, which knows no preferred read replica yet (a new
            // SubscriptionState) and goes on from the positions it had (docs/engine.md,
            // simplification 19).
            Action::SetConfig { name, value } if name == crate::scenario::CLIENT_RACK => {
                let rack = crate::scenario::client_rack_value(value)
                    .map_err(|m| ScenarioError::new("value", m))?;
                self.consumer.preferred_read_replicas = Default::default();
                self.emit(Event::ConfigSet {
                    name: name.clone(),
                    value: rack.clone().unwrap_or_default(),
                });
                self.consumer.client_rack = rack;
            }
            // The application's value size (kafka-producer-perf-test.sh --record-size):
            // each later produce without a `size` (version 2; version 1's records are their
            // values' bytes).
            Action::SetConfig { name, value } if name == crate::scenario::RECORD_SIZE_BYTES => {
                if self.format_version < 2 {
                    return Err(crate::scenario::needs_version_2("name"));
                }
                let size = crate::scenario::record_size_value(value)
                    .map_err(|m| ScenarioError::new("value", m))?;
                self.record_size = Some(size);
                self.emit(Event::ConfigSet {
                    name: name.clone(),
                    value: size.to_string(),
                });
            }
            Action::SetConfig { name, value } => {
                let lag_before = self.config.replica_lag_time_max_ms;
                // Latencies and jitter are read when a send is applied: what was sent before
                // the change goes out under the old values.
                self.flush_effects();
                self.config.set(name, value)?;
                self.emit(Event::ConfigSet {
                    name: name.clone(),
                    value: match value {
                        crate::json::Value::String(s) => s.clone(),
                        v => crate::json::value_text(v),
                    },
                });
                // unclean.leader.election.enable=true is acted on by the controller's next
                // periodic unclean election run, not at once (as article 004 observed).
                if name == "min.insync.replicas" {
                    self.controller_set_min_isr();
                }
                // The isr-expiration task runs every replica.lag.time.max.ms / 2: reschedule
                // it on the new period now, rather than after the run queued at the old one.
                if self.config.replica_lag_time_max_ms != lag_before {
                    self.restart_isr_expiration_tasks();
                }
                // The log flusher's interval is read when it is scheduled: a broker restarted
                // with the new values schedules it again (30 s on).
                if name.starts_with("log.flush.") {
                    for b in self.broker_ids_where(&|_, process| process.is_up()) {
                        self.brokers[&b].restart_log_flusher(&mut node_ctx!(self));
                    }
                }
            }
            Action::ElectPreferred => {
                let results = self.controller_elect(
                    crate::controller::Election::Preferred,
                    crate::controller::ChangeCause::ElectPreferred,
                );
                for (tp, error) in results {
                    self.emit(Event::LeaderElectionTool {
                        election: ElectionType::Preferred,
                        tp: self.topics.name(tp).clone(),
                        error,
                    });
                }
            }
            Action::ElectUnclean => {
                let results = self.controller_elect(
                    crate::controller::Election::Unclean,
                    crate::controller::ChangeCause::ElectUnclean,
                );
                for (tp, error) in results {
                    self.emit(Event::LeaderElectionTool {
                        election: ElectionType::Unclean,
                        tp: self.topics.name(tp).clone(),
                        error,
                    });
                }
            }
            Action::Describe(spec) => {
                // Version 1: the one partition's line, as the articles print it. Version 2:
                // the tool's whole output, topic lines and filters (describe.rs).
                let lines = if self.format_version < 2 {
                    vec![crate::describe::describe_line(
                        self.topics.name(self.view_tp),
                        self.controller.partition(self.view_tp),
                        self.config.protocol,
                    )]
                } else {
                    crate::describe::describe_lines(
                        spec,
                        &self.topics,
                        &self.controller,
                        &self.config,
                    )
                };
                for line in lines {
                    self.emit_tool_output(Tool::Describe, None, line);
                }
            }
            Action::Metrics { name } => {
                for line in self.kafka_metrics().lines(name.as_deref()) {
                    self.emit_tool_output(Tool::Metrics, None, line);
                }
            }
            Action::Offsets => {
                // kafka-get-offsets.sh without --topic: a line per partition, topic by topic.
                let topics = self.topics.clone();
                for tp in topics.partitions() {
                    let line = crate::describe::offsets_line(
                        tp,
                        topics.name(tp),
                        self.controller.partition(tp),
                        &self.brokers,
                        &self.processes,
                    );
                    self.emit_tool_output(Tool::GetOffsets, None, line);
                }
            }
            Action::Epochs { topic, partition } => {
                // Each partition's leader-epoch-checkpoint, replica by replica; a line names
                // its partition where the cluster has more than one.
                for tp in self.readout_partitions(topic.as_deref(), *partition) {
                    let replicas = &self.controller.partition(tp).replicas;
                    let label = self.topics.label(tp);
                    let lines =
                        crate::describe::epoch_lines(tp, label.as_ref(), replicas, &self.brokers);
                    for line in lines {
                        self.emit_tool_output(Tool::LeaderEpochCheckpoints, None, line);
                    }
                }
            }
            Action::Checkpoints => {
                // Each replica's replication-offset-checkpoint entry, partition by partition.
                let topics = self.topics.clone();
                for tp in topics.partitions() {
                    let replicas = &self.controller.partition(tp).replicas;
                    let name = topics.name(tp);
                    for line in
                        crate::describe::hw_checkpoint_lines(tp, name, replicas, &self.brokers)
                    {
                        self.emit_tool_output(Tool::HighWatermarkCheckpoints, None, line);
                    }
                }
            }
            Action::FetcherThreads => {
                for b in self.brokers.values() {
                    let up = self.processes[&b.id].is_up();
                    let threads = if up {
                        crate::fetcher::ReplicaFetcher::live_threads(
                            &self.topics,
                            &self.config,
                            &b.partitions,
                        )
                    } else {
                        Vec::new()
                    };
                    let mut line = format!("broker {}:", b.id);
                    for (leader, fetcher_id) in &threads {
                        line.push_str(&format!(" \"ReplicaFetcherThread-{fetcher_id}-{leader}\""));
                    }
                    if !up {
                        line.push_str(" (no process)");
                    } else if threads.is_empty() {
                        // The article's note on a broker without one: what it leads.
                        let mut led = Vec::new();
                        for (tp, p) in &b.partitions {
                            if matches!(p.role, crate::partition::Role::Leader(_)) {
                                led.push(self.topics.name(*tp).to_string());
                            }
                        }
                        match led.len() {
                            0 => line.push_str(" (none)"),
                            1..=3 => {
                                line.push_str(&format!(" (none: leader of {})", led.join(", ")))
                            }
                            n => line.push_str(&format!(" (none: leader of {n} partitions)")),
                        }
                    }
                    self.effects.push(Effect::Emit(Event::ToolOutput {
                        tool: Tool::FetcherThreads,
                        broker: Some(b.id),
                        line,
                    }));
                }
            }
            Action::DumpLog {
                broker,
                topic,
                partition,
            } => {
                // kafka-dump-log.sh --files with each partition's segment: the one named, or
                // every one the broker holds (of `topic`).
                let named = partition.is_some();
                let sizes = self.record_size.is_some();
                for tp in self.readout_partitions(topic.as_deref(), *partition) {
                    let Some(b) = self.brokers.get(broker) else {
                        break;
                    };
                    let name = self.topics.name(tp);
                    // A broker has a partition's directory when it is a replica (Kafka creates
                    // the log as it becomes one) or a log is left there.
                    let replica = self.controller.partition(tp).replicas.contains(broker);
                    let held = b
                        .partitions
                        .get(&tp)
                        .filter(|p| replica || p.log.log_end_offset() > 0);
                    let lines = match held {
                        Some(p) => crate::describe::dump_log_lines(name, *broker, &p.log, sizes),
                        // DumpLogSegments on a file that is not there.
                        None if named || !self.topics.has_many_partitions() => vec![format!(
                            "broker {broker} log ({name}): none (no replica of {name} on broker {broker})"
                        )],
                        None => continue,
                    };
                    for line in lines {
                        self.emit_tool_output(Tool::DumpLog, Some(*broker), line);
                    }
                }
            }
            Action::Note { text } => self.emit(Event::Caption { text: text.clone() }),
            Action::CancelProduce => self.producer_close_now(),
            Action::LoseZone { .. }
            | Action::StartZone { .. }
            | Action::CutZone { .. }
            | Action::HealZone { .. } => self.zone_action(action)?,
            Action::ReassignExecute {
                reassignment,
                throttle,
                additional,
            } => self.reassign_execute(reassignment, *throttle, *additional)?,
            Action::ReassignVerify {
                reassignment,
                preserve_throttles,
            } => self.reassign_verify(reassignment, *preserve_throttles)?,
            Action::ReassignCancel {
                reassignment,
                preserve_throttles,
            } => self.reassign_cancel(reassignment, *preserve_throttles)?,
        }
        Ok(())
    }

    /// A zone action: its line, then `kill`, `start`, `cut` or `heal` for each of the
    /// zone's brokers, exactly as those actions do them one by one. A zone cut off cuts
    /// each link from its brokers to the brokers outside it, and to the controller: module
    /// 04 spreads the KRaft controllers over the three zones, so the quorum's majority is
    /// outside a cut zone and the zone's brokers lose it (docs/engine.md, simplification
    /// 18).
    fn zone_action(&mut self, action: &Action) -> Result<(), ScenarioError> {
        let zone = action.zone().unwrap_or_default();
        let brokers = crate::scenario::zone_brokers(&self.topics.racks, zone)
            .map_err(|m| ScenarioError::new("action.zone", m))?;
        let what = match action {
            Action::LoseZone { .. } => ZoneAction::Lose,
            Action::StartZone { .. } => ZoneAction::Start,
            Action::CutZone { .. } => ZoneAction::Cut,
            _ => ZoneAction::Heal,
        };
        self.emit(Event::Zone {
            zone: zone.to_string(),
            action: what,
            brokers: brokers.clone(),
        });
        let controller = Endpoint::Controller(crate::scenario::ControllerName::Controller);
        let outside: Vec<BrokerId> = self
            .brokers
            .keys()
            .copied()
            .filter(|b| !brokers.contains(b))
            .collect();
        for &broker in &brokers {
            let a = Endpoint::Broker(broker);
            match what {
                ZoneAction::Lose => self.apply_action(&Action::Kill { broker })?,
                ZoneAction::Start => self.apply_action(&Action::Start { broker })?,
                ZoneAction::Cut | ZoneAction::Heal => {
                    for b in outside
                        .iter()
                        .map(|&o| Endpoint::Broker(o))
                        .chain([controller])
                    {
                        let link = if what == ZoneAction::Cut {
                            Action::Cut { a, b }
                        } else {
                            Action::Heal { a, b }
                        };
                        self.apply_action(&link)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The line of a signal sent to a broker's process (or its start).
    #[inline(never)]
    fn note_signal(&mut self, signal: Signal, broker: BrokerId, outcome: SignalOutcome) {
        self.emit(Event::Signal {
            signal,
            broker,
            outcome,
        });
    }

    /// One line of a read-out tool's output.
    #[inline(never)]
    fn emit_tool_output(&mut self, tool: Tool, broker: Option<BrokerId>, line: String) {
        self.emit(Event::ToolOutput { tool, broker, line });
    }

    fn thaw(&mut self, b: BrokerId) {
        let process = &mut self.processes[&b];
        if process.state != ProcessState::Frozen {
            self.note_signal(Signal::Cont, b, SignalOutcome::NotFrozen);
            return;
        }
        process.state = ProcessState::Running;
        let since = process.frozen_since.take().unwrap_or(self.now);
        let deferred = std::mem::take(&mut process.deferred);
        let pending = std::mem::take(&mut process.pending_sigterm);
        let outcome = SignalOutcome::Thawed {
            frozen_ms: self.now - since,
            queued: deferred.len(),
        };
        self.note_signal(Signal::Cont, b, outcome);
        for e in deferred {
            if let Scheduled::Deliver { message_id } = e {
                if let Some(m) = self.buffered.remove(&message_id) {
                    self.in_flight.insert(message_id, m);
                }
            }
            self.schedule_at(self.now, e);
        }
        if pending {
            let _ = self.apply_action(&Action::Stop { broker: b });
        }
    }

    /// What is on the wire and in frozen brokers' socket buffers (tests look).
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> impl Iterator<Item = &Message> {
        self.in_flight.values().chain(self.buffered.values())
    }
}

/// The routing layer: the simulator delivers a client's input to its node, with a [`Ctx`]
/// built from its own fields, and keeps the oracle that sees every log.
///
/// "Clients always know the current leader" is said here and only here: a real client
/// learns the leader by a Metadata request (and KRaft brokers serve what the controller
/// published); the playground hands each client call the controller's view of each
/// partition's leader (and that broker's log start offset) as it is at that very moment, as
/// if its metadata were refreshed instantly: the consumer the leader of the partition it
/// reads, the producer a lookup of the leader of any partition (its batches go to several).
/// No client reads another node.
impl Sim {
    // ---- the clients: the simulator's side ----------------------------------------------

    /// A produce action: its records go to the first partition of the first topic for now
    /// (the scenario's target comes with issue 14's step 6).
    /// The partition a produce or consume names (`topic`, `partition`), or the first
    /// topic's partition 0.
    fn target(&self, action: &Action) -> Result<Tp, ScenarioError> {
        let first = &self.topics.topics[0].name;
        let (topic, partition) = action.target(first).unwrap_or((first, 0));
        self.topics.find(topic, partition).ok_or_else(|| {
            ScenarioError::new(
                "action.partition",
                format!("no partition {topic}-{partition} in this cluster"),
            )
        })
    }

    /// A produce action to `tp`'s topic: KafkaProducer.partition picks the partition the
    /// action names, else its key's (BuiltInPartitioner.partitionForKey over the topic's
    /// partition count) unless `partitioner.ignore.keys`, else the records go to the topic's
    /// sticky partition, chosen among
    /// the partitions the producer's metadata gives a leader (the controller's: clients
    /// always know the leader).
    pub(crate) fn client_produce(&mut self, spec: &ProduceSpec, tp: Tp) {
        let count = self.topics.topics[usize::from(tp.topic)].partitions.len() as u32;
        let key = spec.key.as_deref().map(str::as_bytes);
        let ignore_keys = self.config.partitioner().ignore_keys;
        let fixed = crate::partitioner::partition(spec.partition, key, count, ignore_keys)
            .ok()
            .flatten();
        let shape = crate::record::RecordShape {
            key: spec.key.clone(),
            size: self.record_size.map(|default| spec.size.unwrap_or(default)),
        };
        let mut ctx = node_ctx!(self);
        if let Some(partition) = fixed {
            let tp = Tp {
                topic: tp.topic,
                partition: partition as u16,
            };
            self.producer.on_produce(&mut ctx, spec, tp, None, shape);
            return;
        }
        let mut leaders = Vec::with_capacity(count as usize);
        for partition in 0..count as u16 {
            let p = self.controller.partitions.get(&Tp {
                topic: tp.topic,
                partition,
            });
            leaders.push(p.and_then(|p| p.leader));
        }
        let sticky = crate::client::Sticky {
            leaders: &leaders,
            random: &mut self.partitioner_rng,
        };
        self.producer
            .on_produce(&mut ctx, spec, tp, Some(sticky), shape);
    }

    pub(crate) fn client_timer(&mut self, t: ClientTimer) {
        let partitions = &self.controller.partitions;
        let leader_of = |tp: Tp| producer_metadata(partitions, tp);
        let mut ctx = node_ctx!(self);
        self.producer.on_timer(&mut ctx, &leader_of, t);
    }

    pub(crate) fn producer_close_now(&mut self) {
        let mut ctx = node_ctx!(self);
        self.producer.on_close(&mut ctx);
    }

    /// A consume action: it reads the first partition of the first topic for now.
    pub(crate) fn client_consume(
        &mut self,
        max_records: Option<u32>,
        from_beginning: bool,
        tp: Tp,
    ) {
        let view = consumer_view(&self.controller, &self.brokers, tp);
        let mut ctx = node_ctx!(self);
        self.consumer
            .on_consume(&mut ctx, &view, max_records, from_beginning, tp);
    }

    /// Delivers a message to the client node it was sent to.
    pub(crate) fn client_receive(&mut self, to: Node, payload: Payload) {
        match to {
            PRODUCER => {
                let partitions = &self.controller.partitions;
                let leader_of = |tp: Tp| producer_metadata(partitions, tp);
                let mut ctx = node_ctx!(self);
                self.producer.on_message(&mut ctx, &leader_of, payload);
            }
            CONSUMER => {
                // The oracle looks first, as a fetch response reaches the consumer's reader.
                if let Payload::ConsumerFetchResponse { request_id, .. } = &payload {
                    if self.consumer.awaits(*request_id) {
                        self.consumer_check_rewritten();
                    }
                }
                let (controller, brokers) = (&self.controller, &self.brokers);
                let view = |tp| consumer_view(controller, brokers, tp);
                let mut ctx = node_ctx!(self);
                self.consumer.on_message(&mut ctx, &view, payload);
            }
            _ => {}
        }
    }

    /// The engine sees every log: it tells the consumer's reader when offsets it already read
    /// now hold other records on the leader (after an unclean election), even though a real
    /// consumer would not notice until it read them again. An observer, not the consumer's
    /// rule: it reads what the consumer node read of each partition (`Consumer::seen`) and
    /// that partition's leader's log, and remembers what it reported in the simulator
    /// (`Sim::consumer_rewrites_reported`).
    fn consumer_check_rewritten(&mut self) {
        for (&tp, seen) in &self.consumer.seen {
            let Some(leader) = self.controller.partitions.get(&tp).and_then(|p| p.leader) else {
                continue;
            };
            let Some(partition) = self
                .brokers
                .get(&leader)
                .and_then(|b| b.partitions.get(&tp))
            else {
                continue;
            };
            let log = &partition.log;
            let mut rewritten = vec![];
            for (&offset, (epoch, value)) in seen {
                if self.consumer_rewrites_reported.contains(&(tp, offset)) {
                    continue;
                }
                if let Some(r) = log.record_at(offset) {
                    if r.epoch != *epoch || r.value != *value {
                        rewritten.push((offset, r.value.clone(), value.clone()));
                    }
                }
            }
            if rewritten.is_empty() {
                continue;
            }
            let (first, last) = (rewritten[0].0, rewritten[rewritten.len() - 1].0);
            // Both lists in one loop (not two Vecs collected).
            let (mut now, mut read) = (Vec::new(), Vec::new());
            for (o, n, b) in rewritten {
                self.consumer_rewrites_reported.insert((tp, o));
                now.push(n);
                read.push(b);
            }
            let event = Event::ConsumerReadRewritten {
                tp: self.topics.label(tp),
                first_offset: first,
                last_offset: last,
                now,
                read,
            };
            self.effects.push(Effect::Emit(event));
        }
    }
}

/// The stream of the producer's sticky partitioner, apart from the simulation's own.
const PARTITIONER_STREAM: u64 = 0x7061_7274_6974_696f;

/// The stream of the replica placer's generator, apart from the simulation's own (so that
/// placing replicas changes no draw of the run).
const PLACEMENT_STREAM: u64 = 0x706c_6163_6572_2121;

/// What the producer's metadata holds of `tp`: the controller's leader and leader epoch (the
/// clients' metadata is the controller's, as if refreshed at once).
fn producer_metadata(
    partitions: &crate::vec_map::VecMap<Tp, crate::metadata::PartitionRegistration>,
    tp: Tp,
) -> crate::client::LeaderAndEpoch {
    let p = partitions.get(&tp);
    crate::client::LeaderAndEpoch {
        leader: p.and_then(|p| p.leader),
        epoch: p.map(|p| p.leader_epoch),
    }
}

/// What the consumer is told of partition `tp` now ("clients always know the leader"): the
/// controller's leader and that broker's log start offset, and the replicas whose brokers
/// are not fenced (online in its metadata, KRaftMetadataCache.getOfflineReplicas).
fn consumer_view(
    controller: &crate::controller::Controller,
    brokers: &VecMap<BrokerId, Broker>,
    tp: Tp,
) -> ConsumerView {
    let registration = controller.partitions.get(&tp);
    let leader = registration.and_then(|p| {
        let broker = p.leader?;
        let log_start_offset = brokers
            .get(&broker)?
            .partitions
            .get(&tp)?
            .log
            .log_start_offset;
        Some(PartitionLeader {
            broker,
            log_start_offset,
        })
    });
    let mut online = Vec::new();
    for &b in registration.map_or(&[][..], |p| &p.replicas[..]) {
        if controller.brokers.get(&b).is_some_and(|r| !r.fenced) {
            online.push(b);
        }
    }
    ConsumerView { leader, online }
}

/// Each topic's replica lists: the scenario's assignment where it gives one, else
/// StripedReplicaPlacer over the registered brokers with their `broker.rack`
/// (ReplicationControlManager.createTopic → ClusterControlManager.replicaPlacer), the seed
/// playing the part of the controller's `Random`.
fn assign_replicas(
    scenario: &Scenario,
    specs: &[crate::scenario::TopicSpec],
) -> Result<Vec<Vec<Vec<BrokerId>>>, ScenarioError> {
    let mut usable = Vec::new();
    for id in 1..=scenario.brokers {
        usable.push(crate::placement::UsableBroker {
            id,
            rack: scenario.rack_of(id).map(str::to_string),
            fenced: false,
        });
    }
    let mut random = Rng::new(scenario.seed ^ PLACEMENT_STREAM);
    let mut out = Vec::with_capacity(specs.len());
    for (t, spec) in specs.iter().enumerate() {
        if let Some(assignment) = &spec.assignment {
            out.push(assignment.clone());
            continue;
        }
        let placement = crate::placement::PlacementSpec {
            start_partition: 0,
            num_partitions: spec.partitions,
            num_replicas: i16::try_from(spec.replication_factor).unwrap_or(i16::MAX),
        };
        let placed = crate::placement::place(&placement, &usable, &mut random).map_err(|e| {
            ScenarioError::new(format!("topics[{t}].replication_factor"), e.to_string())
        })?;
        out.push(placed);
    }
    Ok(out)
}

impl Endpoint {
    pub fn node(&self) -> Node {
        match self {
            Endpoint::Broker(b) => Node::Broker(*b),
            Endpoint::Controller(_) => Node::Controller,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::BrokerTimer;
    use crate::types::TP0;

    /// Asks for a send, as a handler does.
    fn send(sim: &mut Sim, from: Node, to: Node, payload: Payload) {
        sim.effects.push(Effect::Send { from, to, payload });
    }

    #[test]
    fn a_message_sent_to_a_process_is_never_delivered_to_the_next_one() {
        // A TCP connection belongs to one process: what was on its way to a broker that was
        // then killed dies with the connection, even if a new process starts before it
        // arrives. Here a metadata image (leader epoch 7, which no controller wrote) is on
        // the wire to broker 2 when it is killed and started again.
        let s = Scenario::from_json(r#"{"config":{"sim.controller.latency.ms":1000}}"#)
            .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(100);
        let mut image = sim.controller.image();
        image.offset += 1_000;
        image.partitions[&TP0].leader_epoch = 7;
        send(
            &mut sim,
            Node::Controller,
            Node::Broker(2),
            Payload::Metadata {
                image: Arc::new(image),
            },
        );
        sim.flush_effects();
        sim.apply_now(&Action::Kill { broker: 2 }).expect("kill");
        sim.apply_now(&Action::Start { broker: 2 }).expect("start");
        sim.advance_to(1_500);
        assert!(
            sim.brokers[&2]
                .metadata
                .as_ref()
                .is_none_or(|m| m.partitions[&TP0].leader_epoch != 7),
            "the new process never read what was sent to the old one"
        );
        // The same image sent to the running process is applied.
        let mut image = sim.controller.image();
        image.offset += 2_000;
        image.partitions[&TP0].leader_epoch = 7;
        send(
            &mut sim,
            Node::Controller,
            Node::Broker(3),
            Payload::Metadata {
                image: Arc::new(image),
            },
        );
        sim.flush_effects();
        sim.advance_to(3_000);
        assert_eq!(
            sim.brokers[&3]
                .metadata
                .as_ref()
                .map(|m| m.partitions[&TP0].leader_epoch),
            Some(7)
        );
    }

    #[test]
    fn a_restarted_broker_is_reached_over_a_new_connection_that_waits_for_nothing_old() {
        // FIFO holds per TCP connection, and a connection belongs to one process: a message
        // to broker 2's new process does not wait behind one still on its way to the old.
        let s =
            Scenario::from_json(r#"{"config":{"sim.controller.latency.ms":5}}"#).expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(100);
        let old = sim.enqueue(
            Node::Controller,
            Node::Broker(2),
            Payload::BrokerRegistrationResponse { broker_epoch: -1 },
            5_000,
        );
        sim.apply_now(&Action::Kill { broker: 2 }).expect("kill");
        sim.apply_now(&Action::Start { broker: 2 }).expect("start");
        let new = sim.enqueue(
            Node::Controller,
            Node::Broker(2),
            Payload::BrokerRegistrationResponse { broker_epoch: -1 },
            5,
        );
        assert_eq!(sim.in_flight[&old].deliver_at, 5_100);
        assert_eq!(sim.in_flight[&new].deliver_at, 105, "a new connection");
        // On one connection the order holds.
        let behind = sim.enqueue(
            Node::Controller,
            Node::Broker(3),
            Payload::BrokerRegistrationResponse { broker_epoch: -1 },
            5_000,
        );
        let next = sim.enqueue(
            Node::Controller,
            Node::Broker(3),
            Payload::BrokerRegistrationResponse { broker_epoch: -1 },
            5,
        );
        assert_eq!(sim.in_flight[&behind].deliver_at, 5_100);
        assert_eq!(
            sim.in_flight[&next].deliver_at, 5_100,
            "not before the one ahead"
        );
    }

    #[test]
    fn effects_are_applied_after_the_handler_in_the_order_they_were_pushed() {
        // The rule that keeps every run byte-identical: a handler's sends, timers and events
        // wait in the buffer, and are applied in push order. A send draws its jitter and takes
        // its message id and queue sequence number when applied; a timer with a random phase
        // draws after the sends pushed before it; the trace event lands after both.
        let s = Scenario::from_json(
            r#"{"config":{"sim.controller.latency.ms":10,"sim.network.jitter.ms":50}}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(100);
        let (seq, id, trace) = (sim.next_seq, sim.next_message_id, sim.trace_next_seq());
        let mut rng = sim.rng.clone();
        let (queued, in_flight) = (sim.queue.len(), sim.in_flight.len());
        send(
            &mut sim,
            Node::Controller,
            Node::Broker(2),
            Payload::BrokerRegistrationResponse { broker_epoch: -1 },
        );
        sim.effects.push(Effect::SetTimerWithPhase {
            at: sim.now,
            max_phase: 999,
            scheduled: Scheduled::Broker {
                broker: 1,
                incarnation: 0,
                timer: BrokerTimer::HeartbeatOnce,
            },
        });
        sim.schedule_at(
            sim.now + 7,
            Scheduled::Controller(ControllerTimer::UncleanElection),
        );
        sim.emit(Event::Caption {
            text: "after".into(),
        });
        // Nothing is applied while the handler runs.
        assert_eq!(sim.queue.len(), queued);
        assert_eq!(sim.in_flight.len(), in_flight);
        assert_eq!(sim.trace_next_seq(), trace);
        sim.flush_effects();
        assert!(
            sim.effects.is_empty() && sim.effects.capacity() > 0,
            "reused"
        );
        // The send first: the first draw, message id `id`, sequence `seq`.
        let jitter = rng.below_or_equal(50);
        let phase = rng.below_or_equal(999);
        let m = &sim.in_flight[&id];
        assert_eq!(m.deliver_at, 100 + 10 + jitter);
        let seq_of = |f: &dyn Fn(&Scheduled) -> bool| {
            sim.queue
                .iter()
                .find(|q| f(&q.event))
                .map(|q| (q.seq, q.at))
        };
        assert_eq!(
            seq_of(&|e| *e == Scheduled::Deliver { message_id: id }),
            Some((seq, m.deliver_at))
        );
        // Then the phased timer (the second draw), then the plain one.
        assert_eq!(
            seq_of(&|e| matches!(
                e,
                Scheduled::Broker {
                    timer: BrokerTimer::HeartbeatOnce,
                    ..
                }
            )),
            Some((seq + 1, 100 + phase))
        );
        let plain = sim.queue.iter().find(|q| {
            q.at == 107 && q.event == Scheduled::Controller(ControllerTimer::UncleanElection)
        });
        assert_eq!(plain.map(|q| q.seq), Some(seq + 2));
        assert_eq!(sim.next_seq, seq + 3);
        // And the event last, at the handler's time.
        let last = sim.trace_events().next_back().expect("an event");
        assert_eq!((last.seq, last.time_ms), (trace, 100));
        assert!(matches!(last.event(), Event::Caption { text } if text == "after"));
    }

    #[test]
    fn a_clone_shares_the_timeline_which_stays_sorted() {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":900,"action":"describe"},{"at":100,"action":"offsets"},
                             {"at":100,"action":"epochs"}],"end_ms":2000}"#,
        )
        .unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let copy = sim.clone();
        assert!(Arc::ptr_eq(&sim.timeline, &copy.timeline));
        let order: Vec<TimeMs> = sim.pending_timeline().map(|a| a.at).collect();
        assert_eq!(order, [100, 100, 900]);
        assert!(
            matches!(sim.timeline[1].action, Action::Epochs { .. }),
            "stable within a time"
        );
        sim.advance_to(2_000);
        assert_eq!(sim.pending_timeline().count(), 0);
        assert_eq!(
            copy.pending_timeline().count(),
            3,
            "the clone's cursor is its own"
        );
    }
}
