//! GPU work off the UI frame, on both targets: natively a worker thread that waits on the async
//! engine (`pollster::block_on`), in the browser a task on the page that yields at every
//! read-back. Results come back through the channels the app polls every frame.

use std::future::Future;

/// Start the future `make` returns, off the UI frame. `make` runs on the worker (natively) or at
/// once (in the browser); the future need not be `Send`.
#[cfg(not(target_arch = "wasm32"))]
pub fn spawn<F, Fut>(make: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + 'static,
{
    std::thread::spawn(move || pollster::block_on(make()));
}

/// Start the future `make` returns, off the UI frame. `make` runs on the worker (natively) or at
/// once (in the browser); the future need not be `Send`.
#[cfg(target_arch = "wasm32")]
pub fn spawn<F, Fut>(make: F)
where
    F: FnOnce() -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    wasm_bindgen_futures::spawn_local(make());
}
