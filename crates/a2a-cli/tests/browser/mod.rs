//! A real browser for the inspector's tests: Debian's chromium, headless, driven through
//! chromedriver (WebDriver) with fantoccini. Where a test fails, a screenshot of the page is
//! saved under `target/tmp/inspector-screenshots/`.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use futures::FutureExt;

/// How long an element or a text is waited for.
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Browser {
    driver: Child,
    pub client: Client,
    name: String,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn free_port() -> u16 {
    crate::common::loopback_listener().1.port()
}

pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("inspector-screenshots")
}

impl Browser {
    /// chromedriver on a free port and a headless chromium window of `width` x `height`.
    pub async fn start(name: &str, width: u32, height: u32) -> Browser {
        let chromium = std::env::var("A2A_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let chromedriver =
            std::env::var("A2A_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let port = free_port();
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {chromedriver}: {e} (Debian: apt-get install chromium-driver)")
            });
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while reqwest::get(format!("{url}/status")).await.is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    format!("--window-size={width},{height}"),
                    "--user-data-dir=".to_owned() + &std::env::temp_dir().join(format!("a2a-chromium-{}-{port}", std::process::id())).display().to_string(),
                ],
            }),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&url)
            .await
            .expect("a chromium session");
        Browser {
            driver,
            client,
            name: name.to_owned(),
        }
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// The element `css`, waited for.
    pub async fn find(&self, css: &str) -> Element {
        self.find_within(css, WAIT).await
    }

    /// The element `css`, waited for up to `within`.
    pub async fn find_within(&self, css: &str, within: Duration) -> Element {
        self.client
            .wait()
            .at_most(within)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} within {within:?}: {e}"))
    }

    pub async fn click(&self, css: &str) {
        // The element may be replaced as the page redraws: find it again if so.
        for _ in 0..5 {
            let el = self.find(css).await;
            // Into the middle of the window, away from the sticky composer at its bottom.
            let _ = self
                .client
                .execute(
                    "arguments[0].scrollIntoView({block: 'center'})",
                    vec![serde_json::to_value(&el).unwrap()],
                )
                .await;
            if el.click().await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("cannot click {css}");
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let el = self.find(css).await;
        el.clear().await.unwrap();
        el.send_keys(text).await.unwrap();
    }

    /// The text of `css` once it contains `wanted`.
    pub async fn wait_text(&self, css: &str, wanted: &str) -> String {
        let deadline = Instant::now() + WAIT;
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(el) = self.client.find(Locator::Css(css)).await
                && let Ok(text) = el.text().await
            {
                if text.contains(wanted) {
                    return text;
                }
                last = text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{css} never showed {wanted:?}; last: {last:?}");
    }

    /// Chooses `value` in the select `css`.
    pub async fn choose(&self, css: &str, value: &str) {
        self.find(css).await.select_by_value(value).await.unwrap();
    }

    /// Types `text` into the conversation's composer and sends it.
    pub async fn send_message(&self, text: &str) {
        self.type_into("#message-text", text).await;
        self.click("#send").await;
    }

    /// Chooses the host's agent `id` in the agent list, then opens the conversation with it
    /// once its card (whose name contains `name`) is loaded.
    pub async fn open_conversation(&self, id: &str, name: &str) {
        self.click("nav a[data-view=agents]").await;
        self.click(&format!("button[data-agent={id}]")).await;
        self.wait_text("#agent-name", name).await;
        self.click("nav a[data-view=chat]").await;
    }

    /// Whether `css` matches an element now.
    pub async fn has(&self, css: &str) -> bool {
        self.client.find(Locator::Css(css)).await.is_ok()
    }

    /// Runs `script` in the page.
    pub async fn js(&self, script: &str) -> serde_json::Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    pub async fn screenshot(&self, label: &str) -> PathBuf {
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}-{label}.png", self.name));
        if let Ok(png) = self.client.screenshot().await {
            let _ = std::fs::write(&path, png);
        }
        path
    }

    /// Runs the test's steps, then ends the browser session; when they fail (a panic), a
    /// screenshot of the page is saved first.
    pub async fn check(&self, steps: impl Future<Output = ()>) {
        let outcome = AssertUnwindSafe(steps).catch_unwind().await;
        if let Err(panic) = outcome {
            let shot = self.screenshot("failed").await;
            eprintln!("screenshot of the page: {}", shot.display());
            let _ = self.client.clone().close().await;
            std::panic::resume_unwind(panic);
        }
        let _ = self.client.clone().close().await;
    }
}
