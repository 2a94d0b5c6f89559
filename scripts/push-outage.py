#!/usr/bin/env python3
"""Push delivery under a receiver outage: what arrives, what is lost, what is duplicated.

Starts `a2a serve --agent slow`, sends TASKS tasks, each with a push config pointing at a
webhook receiver that is down for the first DOWN seconds, then starts the receiver and waits
until every task's COMPLETED notification has arrived (or TIMEOUT). Prints the counts.

    A2A_BIN=target/release/a2a TASKS=50 DOWN=30 scripts/push-outage.py

STORE (default memory) is the server's --store. With RESTART=1 (needs a durable STORE, say
sqlite:/tmp/outage.db) the server is killed (SIGKILL) halfway through the outage and started
again on the same store and port, so the deliveries must survive the process.

Each task of the slow agent (message "0.2") logs five events: the task, WORKING, the
`progress` artifact, the `result` artifact, COMPLETED. An event is identified by its task,
its kind and its state or artifact name (not its bytes, which a process that takes over may
render differently), so a resent event counts as a duplicate, not as a new event.
"""

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

BIN = os.environ.get("A2A_BIN", "target/release/a2a")
TASKS = int(os.environ.get("TASKS", "50"))
DOWN = float(os.environ.get("DOWN", "30"))
TIMEOUT = float(os.environ.get("TIMEOUT", "180"))
EVENTS_PER_TASK = 5
STORE = os.environ.get("STORE", "memory")
RESTART = os.environ.get("RESTART") == "1"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


received = []  # (arrival time, task id, event key, is terminal)
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
lock = threading.Lock()


class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        event = json.loads(body)
        (kind, about), = event.items()
        task_id = about.get("taskId") or about.get("id")
        state = (about.get("status") or {}).get("state")
        name = (about.get("artifact") or {}).get("name")
        done = kind == "statusUpdate" and state in TERMINAL
        with lock:
            received.append((time.time(), task_id, (kind, state, name), done))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def rpc(url, method, params):
    req = urllib.request.Request(
        url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def metric(base, outcome):
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(f'a2a_push_deliveries_total{{outcome="{outcome}"}} '):
                return float(line.split()[-1])
    return 0.0


def main():
    if RESTART and STORE == "memory":
        raise SystemExit("push-outage: RESTART=1 needs a durable STORE (say sqlite:/tmp/outage.db)")
    port, hook_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    def start():
        proc = subprocess.Popen(
            [BIN, "serve", "--agent", "slow", "--store", STORE, "--port", str(port),
             "--push-allow", "127.0.0.1", "--lease-expiry", "1"],
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/.well-known/agent-card.json", timeout=1)
                return proc
            except OSError:
                time.sleep(0.05)
        proc.kill()
        raise SystemExit(f"push-outage: {BIN} serve did not answer on {base}")

    server = start()
    try:
        hook = f"http://127.0.0.1:{hook_port}/hook"
        started = time.time()
        ids = []
        for i in range(TASKS):
            reply = rpc(base, "SendMessage", {
                "message": {"messageId": f"outage-{i}", "role": "ROLE_USER", "parts": [{"text": "0.2"}]},
                "configuration": {"returnImmediately": True, "taskPushNotificationConfig": {"url": hook}},
            })
            ids.append(reply["result"]["task"]["id"])
        if RESTART:
            time.sleep(max(0.0, DOWN / 2 - (time.time() - started)))
            server.kill()
            server.wait()
            server = start()
            print(f"server killed and restarted {time.time() - started:.1f} s into the outage")
        time.sleep(max(0.0, DOWN - (time.time() - started)))
        receiver = http.server.ThreadingHTTPServer(("127.0.0.1", hook_port), Hook)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        up = time.time()
        deadline = up + TIMEOUT
        while time.time() < deadline:
            with lock:
                done = {t for (_, t, _, d) in received if d and t in ids}
            if len(done) >= TASKS:
                break
            time.sleep(0.1)
        last = max((t for (t, *_rest) in received), default=up)
        with lock:
            distinct = {(t, k) for (_, t, k, _) in received if t in ids}
            total = len(received)
        expected = TASKS * EVENTS_PER_TASK
        print(f"tasks {TASKS}, receiver down {DOWN:.0f} s")
        print(f"events expected {expected}, distinct received {len(distinct)}, "
              f"lost {expected - len(distinct)}, duplicates {total - len(distinct)}")
        print(f"all delivered {last - up:.1f} s after the receiver came up")
        print(f"server counted: delivered {metric(base, 'delivered'):.0f}, "
              f"retried {metric(base, 'retried'):.0f}, gave_up {metric(base, 'gave_up'):.0f}")
        receiver.shutdown()
        return 0 if len(distinct) == expected else 1
    finally:
        server.kill()


if __name__ == "__main__":
    sys.exit(main())
