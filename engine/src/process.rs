//! A broker's process as the operating system sees it: the simulator's, not the node's.
//!
//! Whether the process runs, is frozen (SIGSTOP), was killed or stopped, which incarnation
//! it is (a TCP connection and a timer belong to one process, and die with it), what waits
//! in its socket buffer while it is frozen, and whether its machine's disk was lost. Faults
//! change these; the broker node never reads them (a frozen JVM does not know it was
//! frozen, except that time moved), and learns of a fault only through its own entry points
//! (`Broker::start`, `lose_memory`, `lose_disk`).

use crate::effect::Scheduled;
use crate::types::{ProcessState, TimeMs};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Process {
    pub state: ProcessState,
    /// Bumped when a process ends and when one starts, so that a message sent to, or a timer
    /// set by, an earlier process is never delivered to a later one.
    pub incarnation: u32,
    /// What reached the process while it was frozen (deliveries and timers), in arrival
    /// order: run on thaw.
    pub deferred: Vec<Scheduled>,
    pub frozen_since: Option<TimeMs>,
    /// SIGTERM received while frozen: acted on at thaw.
    pub pending_sigterm: bool,
    /// The machine's disk was lost (at some time in the run): the observers do not count a
    /// record on it as held, and name the lost disk as a loss's cause.
    pub disk_lost: bool,
    /// The machine lost power (at some time in the run): its logs may have lost records
    /// the OS had not written back, so a loss may name it as the cause.
    pub power_lost: bool,
}

impl Process {
    /// A process running from the cluster's start.
    pub fn running() -> Process {
        Process {
            state: ProcessState::Running,
            incarnation: 0,
            deferred: Vec::new(),
            frozen_since: None,
            pending_sigterm: false,
            disk_lost: false,
            power_lost: false,
        }
    }

    pub fn is_up(&self) -> bool {
        self.state.is_up()
    }
}
