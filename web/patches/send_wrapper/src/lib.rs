//! send_wrapper 0.6's `SendWrapper`, put in its place through `[patch.crates-io]` in the
//! workspace's Cargo.toml, with the same API and, on native targets, the same behaviour.
//!
//! Why: Leptos keeps every value of its `LocalStorage` (effects, local signals, stored
//! values, node refs) in a `SendWrapper`, which records the creating thread's id and
//! compares it with `std::thread::current()` on every access and drop. On
//! `wasm32-unknown-unknown` without the `atomics` target feature (how Watermark is built)
//! there is one thread and no way to start another, so that comparison can never fail; but
//! each of its 76 call sites, and `thread::current` with the thread handle it creates,
//! still cost about 7 kB of wasm (BENCHMARKS.md, "Shipped size").
//!
//! What is here: on single-threaded wasm the wrapper holds only the value, and `valid` is
//! always true. Everywhere else (the web crate's native unit tests) it records the thread and
//! panics on a foreign access or drop, as send_wrapper does. If a Leptos upgrade names more
//! of send_wrapper's API (its `futures` feature, say), the build fails here, not at run time.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

/// One thread only: nothing to record.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[derive(Clone, Copy, Debug)]
struct Origin;

#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
impl Origin {
    fn here() -> Origin {
        Origin
    }
    fn is_here(self) -> bool {
        true
    }
}

/// The thread that created the value.
#[cfg(not(all(target_arch = "wasm32", not(target_feature = "atomics"))))]
#[derive(Clone, Copy, Debug)]
struct Origin(std::thread::ThreadId);

#[cfg(not(all(target_arch = "wasm32", not(target_feature = "atomics"))))]
impl Origin {
    fn here() -> Origin {
        Origin(std::thread::current().id())
    }
    fn is_here(self) -> bool {
        self.0 == std::thread::current().id()
    }
}

/// A value that may move between threads but is used and dropped only on the thread that
/// created it (send_wrapper's contract).
pub struct SendWrapper<T> {
    data: ManuallyDrop<T>,
    origin: Origin,
}

impl<T> SendWrapper<T> {
    pub fn new(data: T) -> SendWrapper<T> {
        SendWrapper {
            data: ManuallyDrop::new(data),
            origin: Origin::here(),
        }
    }

    /// Whether the current thread may use the value.
    pub fn valid(&self) -> bool {
        self.origin.is_here()
    }

    #[track_caller]
    pub fn take(self) -> T {
        self.assert_valid();
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so `data` is taken exactly once.
        unsafe { ManuallyDrop::take(&mut this.data) }
    }

    #[track_caller]
    fn assert_valid(&self) {
        if !self.valid() {
            foreign_thread("Dereferenced")
        }
    }
}

// SAFETY: the value is only reached through `Deref`, `DerefMut`, `take` and `Drop`, which
// check that they run on the creating thread (on single-threaded wasm there is no other).
unsafe impl<T> Send for SendWrapper<T> {}
unsafe impl<T> Sync for SendWrapper<T> {}

impl<T> Deref for SendWrapper<T> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        self.assert_valid();
        &self.data
    }
}

impl<T> DerefMut for SendWrapper<T> {
    #[track_caller]
    fn deref_mut(&mut self) -> &mut T {
        self.assert_valid();
        &mut self.data
    }
}

impl<T> Drop for SendWrapper<T> {
    #[track_caller]
    fn drop(&mut self) {
        if !std::mem::needs_drop::<T>() || self.valid() {
            // SAFETY: dropped once, here; `data` is not used after.
            unsafe { ManuallyDrop::drop(&mut self.data) }
        } else if !std::thread::panicking() {
            foreign_thread("Dropped")
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for SendWrapper<T> {
    #[track_caller]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendWrapper")
            .field("data", self.deref())
            .finish()
    }
}

impl<T: Clone> Clone for SendWrapper<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        Self::new(self.deref().clone())
    }
}

#[cfg(feature = "futures")]
mod futures {
    use super::SendWrapper;
    use futures_core::Stream;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    impl<F: Future> Future for SendWrapper<F> {
        type Output = F::Output;

        #[track_caller]
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            if !self.valid() {
                super::foreign_thread("Polled")
            }
            // SAFETY: the wrapped future is never moved out of a pinned wrapper: `take`
            // needs the wrapper by value, which a `Pin<&mut Self>` does not give.
            unsafe { self.map_unchecked_mut(|w| &mut *w.data) }.poll(cx)
        }
    }

    impl<S: Stream> Stream for SendWrapper<S> {
        type Item = S::Item;

        #[track_caller]
        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            if !self.valid() {
                super::foreign_thread("Polled")
            }
            // SAFETY: as for `Future` above.
            unsafe { self.map_unchecked_mut(|w| &mut *w.data) }.poll_next(cx)
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            (**self).size_hint()
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn foreign_thread(what: &str) -> ! {
    panic!("{what} SendWrapper<T> variable from a thread different to the one it has been created with.")
}

#[cfg(test)]
mod tests {
    use super::SendWrapper;
    use std::rc::Rc;

    #[test]
    fn the_creating_thread_uses_and_drops_the_value() {
        let w = SendWrapper::new(Rc::new(42));
        assert!(w.valid());
        assert_eq!(**w, 42);
        assert_eq!(*w.clone().take(), 42);
    }

    #[test]
    fn another_thread_may_move_it_but_not_use_it() {
        let w = SendWrapper::new(Rc::new(42));
        let used = std::thread::spawn(move || {
            assert!(!w.valid());
            let _ = **w;
        })
        .join();
        assert!(used.is_err(), "a foreign deref panics");
        let w = SendWrapper::new(Rc::new(42));
        let dropped = std::thread::spawn(move || drop(w)).join();
        assert!(dropped.is_err(), "a foreign drop panics");
    }

    #[cfg(feature = "futures")]
    #[test]
    fn a_wrapped_future_polls_on_its_thread_only() {
        use std::future::{ready, Future};
        use std::pin::pin;
        use std::task::{Context, Poll, Waker};
        let mut cx = Context::from_waker(Waker::noop());
        let w = pin!(SendWrapper::new(ready(42)));
        assert_eq!(w.poll(&mut cx), Poll::Ready(42));
        let w = SendWrapper::new(ready(Rc::new(42)));
        let polled = std::thread::spawn(move || {
            let mut cx = Context::from_waker(Waker::noop());
            let _ = pin!(w).poll(&mut cx);
        })
        .join();
        assert!(polled.is_err(), "a foreign poll panics");
    }
}
