"""Scenarios that drive an A2A server with the official Python SDK client (a2a-sdk).

    python sdk_client.py SCENARIO URL [--protocol 0.3]

Each scenario checks what it sees, prints one JSON line with what it observed, and exits
non-zero with a message on the first mismatch. `URL` is the agent's base URL (its card is
at URL/.well-known/agent-card.json). With `--protocol 0.3` the card is narrowed to its v0.3
interfaces, so the SDK uses its v0.3 transport.

Scenarios (against `a2a serve` agents):
  send-get              echo: blocking send of "task: hello interop", then GetTask
  message               echo: a direct message reply
  slow-timeout-cancel   slow: stream with a 250 ms client-side timeout, the task keeps
                        running, then CancelTask -> CANCELED with only the `progress` artifact
  multi                 multi: stream through INPUT_REQUIRED collecting every artifact, then
                        continue the task and collect the rest
  v03-conversation      multi, plain HTTP (httpx, no SDK), v0.3 JSON-RPC: three turns with
                        contextId/taskId continuity
"""

import argparse
import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)


class Mismatch(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Mismatch(what)


def user(text, task_id='', context_id=''):
    return Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)],
                   task_id=task_id, context_id=context_id)


def state(s):
    return TaskState.Name(s)


class Assembler:
    """Rebuilds artifacts from stream events: by artifact id, honouring append."""

    def __init__(self):
        self.order = []
        self.parts = {}
        self.names = {}
        self.task_id = None
        self.context_id = None
        self.states = []
        self.last_chunks = set()

    def apply(self, ev):
        kind = ev.WhichOneof('payload')
        if kind == 'task':
            self.task_id, self.context_id = ev.task.id, ev.task.context_id
            self.states.append(state(ev.task.status.state))
            for a in ev.task.artifacts:
                if a.artifact_id not in self.parts:
                    self.order.append(a.artifact_id)
                    self.parts[a.artifact_id] = [p.text for p in a.parts]
                    self.names[a.artifact_id] = a.name
        elif kind == 'status_update':
            self.task_id = self.task_id or ev.status_update.task_id
            self.context_id = self.context_id or ev.status_update.context_id
            self.states.append(state(ev.status_update.status.state))
        elif kind == 'artifact_update':
            u = ev.artifact_update
            aid = u.artifact.artifact_id
            texts = [p.text for p in u.artifact.parts]
            if aid in self.parts and u.append:
                self.parts[aid].extend(texts)
            else:
                if aid not in self.parts:
                    self.order.append(aid)
                self.parts[aid] = texts
            self.names[aid] = u.artifact.name or self.names.get(aid, '')
            if u.last_chunk:
                self.last_chunks.add(aid)

    def artifacts(self):
        return [{'id': a, 'name': self.names[a], 'text': ''.join(self.parts[a])} for a in self.order]


# The binding the SDK client speaks (`--binding`): JSONRPC, HTTP+JSON or GRPC.
BINDING = 'JSONRPC'


def grpc_channel(address):
    import grpc  # only with the SDK's grpc extra; only gRPC scenarios need it

    return grpc.aio.insecure_channel(address)


async def make_clients(url, protocol, http):
    card = await A2ACardResolver(http, url).get_agent_card()
    if protocol:
        keep = [i for i in card.supported_interfaces if i.protocol_version.startswith(protocol)]
        expect(keep, f'the card offers no {protocol} interface')
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)

    def make(streaming):
        cfg = ClientConfig(streaming=streaming, httpx_client=http, supported_protocol_bindings=[BINDING],
                           grpc_channel_factory=grpc_channel)
        return ClientFactory(cfg).create(card)

    return card, make(False), make(True)


async def send_get(url, protocol, http):
    _, blocking, _ = await make_clients(url, protocol, http)
    results = [ev async for ev in blocking.send_message(SendMessageRequest(message=user('task: hello interop')))]
    expect(len(results) == 1 and results[0].WhichOneof('payload') == 'task', f'one task expected, got {results}')
    task = results[0].task
    expect(task.status.state == TaskState.TASK_STATE_COMPLETED, f'state {state(task.status.state)}')
    expect([p.text for a in task.artifacts for p in a.parts] == ['hello interop'], f'artifacts {task.artifacts}')
    expect(task.context_id, 'contextId missing')
    got = await blocking.get_task(GetTaskRequest(id=task.id, history_length=10))
    expect(got.id == task.id and got.status.state == TaskState.TASK_STATE_COMPLETED, f'get returned {got}')
    expect([a.artifact_id for a in got.artifacts] == [a.artifact_id for a in task.artifacts], 'artifacts differ')
    expect(any(p.text == 'task: hello interop' for m in got.history for p in m.parts), 'history lacks the message')
    return {'task_id': task.id, 'state': state(got.status.state), 'artifacts': len(got.artifacts)}


async def message(url, protocol, http):
    _, blocking, _ = await make_clients(url, protocol, http)
    results = [ev async for ev in blocking.send_message(SendMessageRequest(message=user('just say this')))]
    expect(len(results) == 1 and results[0].WhichOneof('payload') == 'message', f'one message expected: {results}')
    m = results[0].message
    expect(m.role == Role.ROLE_AGENT and [p.text for p in m.parts] == ['just say this'], f'message {m}')
    return {'text': m.parts[0].text, 'context_id': m.context_id}


async def slow_timeout_cancel(url, protocol, http):
    _, blocking, streaming = await make_clients(url, protocol, http)
    acc = Assembler()

    async def listen():
        async for ev in streaming.send_message(SendMessageRequest(message=user('go'))):
            acc.apply(ev)

    try:
        await asyncio.wait_for(listen(), timeout=0.25)
        raise Mismatch('the slow agent finished within 250 ms')
    except asyncio.TimeoutError:
        pass
    expect(acc.task_id, 'no task id within 250 ms')
    running = await blocking.get_task(GetTaskRequest(id=acc.task_id))
    expect(running.status.state == TaskState.TASK_STATE_WORKING,
           f'timing out the client must not stop the task; state {state(running.status.state)}')
    canceled = await blocking.cancel_task(CancelTaskRequest(id=acc.task_id))
    expect(canceled.status.state == TaskState.TASK_STATE_CANCELED, f'cancel returned {state(canceled.status.state)}')
    names = [a.name for a in canceled.artifacts]
    expect(names == ['progress'], f'artifacts after cancel: {names}')
    again = await blocking.get_task(GetTaskRequest(id=acc.task_id))
    expect(again.status.state == TaskState.TASK_STATE_CANCELED, 'GetTask after cancel')
    expect([a.name for a in again.artifacts] == ['progress'], 'GetTask artifacts after cancel')
    return {'task_id': acc.task_id, 'streamed_states': acc.states, 'state': state(again.status.state),
            'artifacts': names}


async def multi(url, protocol, http):
    _, blocking, streaming = await make_clients(url, protocol, http)
    acc = Assembler()
    async for ev in streaming.send_message(SendMessageRequest(message=user('start'))):
        acc.apply(ev)
    expect(acc.states[-1] == 'TASK_STATE_INPUT_REQUIRED', f'states {acc.states}')
    first = acc.artifacts()
    expect([a['name'] for a in first] == ['summary', 'story', 'stats'], f'artifacts {first}')
    expect(first[1]['text'] == 'Once upon a time.', f'chunks not appended: {first[1]}')
    follow = user('the answer', task_id=acc.task_id, context_id=acc.context_id)
    async for ev in streaming.send_message(SendMessageRequest(message=follow)):
        acc.apply(ev)
    expect(acc.states[-1] == 'TASK_STATE_COMPLETED', f'states {acc.states}')
    final = await blocking.get_task(GetTaskRequest(id=acc.task_id))
    expect(final.status.state == TaskState.TASK_STATE_COMPLETED, 'final state')
    names = [a.name for a in final.artifacts]
    expect(names == ['summary', 'story', 'stats', 'echo'], f'final artifacts {names}')
    expect([p.text for p in final.artifacts[3].parts] == ['the answer'], 'echo artifact')
    return {'task_id': acc.task_id, 'states': acc.states, 'artifacts': acc.artifacts()}


async def v03_conversation(url, protocol, http):
    async def send(text, task_id=None, context_id=None):
        m = {'kind': 'message', 'messageId': str(uuid.uuid4()), 'role': 'user',
             'parts': [{'kind': 'text', 'text': text}]}
        if task_id:
            m['taskId'] = task_id
        if context_id:
            m['contextId'] = context_id
        body = {'jsonrpc': '2.0', 'id': str(uuid.uuid4()), 'method': 'message/send', 'params': {'message': m}}
        r = await http.post(url.rstrip('/'), json=body, headers={'A2A-Version': ''})
        expect(r.status_code == 200, f'HTTP {r.status_code}')
        j = r.json()
        expect('result' in j, f'error: {j}')
        expect(j['result']['kind'] == 'task', f'not a task: {j}')
        return j['result']

    t1 = await send('start')
    expect(t1['status']['state'] == 'input-required', f'turn 1: {t1["status"]}')
    t2 = await send('my answer', task_id=t1['id'], context_id=t1['contextId'])
    expect(t2['id'] == t1['id'] and t2['contextId'] == t1['contextId'], 'turn 2 changed ids')
    expect(t2['status']['state'] == 'completed', f'turn 2: {t2["status"]}')
    texts = [p['text'] for a in t2['artifacts'] for p in a['parts'] if p['kind'] == 'text']
    expect('my answer' in texts, f'turn 2 artifacts {texts}')
    t3 = await send('again', context_id=t1['contextId'])
    expect(t3['contextId'] == t1['contextId'] and t3['id'] != t1['id'], 'turn 3 ids')
    expect(t3['status']['state'] == 'input-required', f'turn 3: {t3["status"]}')
    return {'context_id': t1['contextId'], 'tasks': [t1['id'], t2['id'], t3['id']]}


SCENARIOS = {
    'send-get': send_get,
    'message': message,
    'slow-timeout-cancel': slow_timeout_cancel,
    'multi': multi,
    'v03-conversation': v03_conversation,
}


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('scenario', choices=sorted(SCENARIOS))
    ap.add_argument('url')
    ap.add_argument('--protocol', choices=['1.0', '0.3'])
    ap.add_argument('--binding', choices=['JSONRPC', 'HTTP+JSON', 'GRPC'], default='JSONRPC')
    args = ap.parse_args()
    global BINDING
    BINDING = args.binding
    async with httpx.AsyncClient(timeout=30) as http:
        try:
            out = await SCENARIOS[args.scenario](args.url, args.protocol, http)
        except Mismatch as e:
            print(f'MISMATCH in {args.scenario}: {e}', file=sys.stderr)
            return 1
    print(json.dumps(out))
    return 0


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
