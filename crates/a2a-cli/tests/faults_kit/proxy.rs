//! A TCP proxy the suite puts between parts: in front of a database, to cut every
//! connection at once; in front of replicas, to spread connections round-robin (skipping
//! replicas that refuse) the way a load balancer would.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A proxy running on its own thread until dropped.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<State>,
    stop: CancellationToken,
}

struct State {
    upstreams: Vec<SocketAddr>,
    next: AtomicUsize,
    /// New connections are dropped until then.
    refuse_until: Mutex<Option<Instant>>,
    /// Cancelled to drop every live connection (replaced after each cut).
    live: Mutex<CancellationToken>,
    /// Connections proxied, and cut.
    accepted: AtomicUsize,
    cut: AtomicUsize,
}

impl Proxy {
    /// Proxies a free loopback port to `upstreams`, one connection after another in turn.
    pub fn start(upstreams: Vec<SocketAddr>) -> Self {
        Self::start_on(0, upstreams)
    }

    /// The same on loopback port `port`.
    pub fn start_on(port: u16, upstreams: Vec<SocketAddr>) -> Self {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let state = Arc::new(State {
            upstreams,
            next: AtomicUsize::new(0),
            refuse_until: Mutex::new(None),
            live: Mutex::new(CancellationToken::new()),
            accepted: AtomicUsize::new(0),
            cut: AtomicUsize::new(0),
        });
        let stop = CancellationToken::new();
        let (s, st) = (state.clone(), stop.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).unwrap();
                loop {
                    let (conn, _) = tokio::select! {
                        () = st.cancelled() => return,
                        accepted = listener.accept() => match accepted {
                            Ok(a) => a,
                            Err(_) => continue,
                        },
                    };
                    let refusing = s
                        .refuse_until
                        .lock()
                        .unwrap()
                        .is_some_and(|t| Instant::now() < t);
                    if refusing {
                        drop(conn);
                        continue;
                    }
                    s.accepted.fetch_add(1, Ordering::Relaxed);
                    let live = s.live.lock().unwrap().clone();
                    tokio::spawn(relay(conn, s.clone(), live));
                }
            });
        });
        Self { addr, state, stop }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops every live connection now and every new one for `refuse`.
    pub fn cut(&self, refuse: Duration) {
        *self.state.refuse_until.lock().unwrap() = Some(Instant::now() + refuse);
        let old = std::mem::take(&mut *self.state.live.lock().unwrap());
        old.cancel();
        self.state.cut.fetch_add(1, Ordering::Relaxed);
    }

    /// Connections proxied so far.
    pub fn accepted(&self) -> usize {
        self.state.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
        self.state.live.lock().unwrap().cancel();
    }
}

/// Connects `conn` to the next upstream that accepts and copies both ways until either side
/// closes or `live` is cancelled.
async fn relay(mut conn: TcpStream, state: Arc<State>, live: CancellationToken) {
    let n = state.upstreams.len();
    let start = state.next.fetch_add(1, Ordering::Relaxed);
    let mut upstream = None;
    for i in 0..n {
        let addr = state.upstreams[(start + i) % n];
        if let Ok(Ok(c)) =
            tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr)).await
        {
            upstream = Some(c);
            break;
        }
    }
    let Some(mut upstream) = upstream else {
        return;
    };
    let _ = conn.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    tokio::select! {
        () = live.cancelled() => {}
        _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream) => {}
    }
}
