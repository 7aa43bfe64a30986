#!/usr/bin/env python3
"""Hostile clients against dl4cpp's HTTP servers, on loopback only (bench/server-abuse.sh runs it).

mnist_inference_server: each case starts a fresh server (so that its memory figures are its own),
replays one kind of abuse from the hardening issues, and reports what the client got (status
codes), the server's resident memory before and after and at its peak, whether /health stayed
responsive meanwhile, and how long the server took to exit after SIGTERM. Every case is bounded: at
most 21 connections and about 40 seconds.

The training page (lenet_mnist --ui-port 0): each case starts a short training run serving the
page, replays one kind of abuse against the page while it trains, and reports what the client got,
whether GET /stats.json stayed responsive, the process's peak memory and most file descriptors,
and whether training finished, how long it took (against a run without clients) and whether its
--save succeeded. Cases hold at most 2,000 connections.

The whole run takes a few minutes.
"""
import argparse
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HOST = "127.0.0.1"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    """One mnist_inference_server process on a free loopback port."""

    def __init__(self, binary, model, startup_timeout=60):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "--model", model, "--port", str(self.port), "--workers", "1", "--mode", "batched"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited at start-up: " + self.proc.stdout.read().decode(errors="replace"))
            if self.health(timeout=1)[0] == 200:
                return
            time.sleep(0.1)
        raise RuntimeError("server did not answer /health within %d s" % startup_timeout)

    def memory_mb(self, field):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return None

    def health(self, timeout=5):
        """(status or None, seconds)."""
        start = time.monotonic()
        try:
            c = http.client.HTTPConnection(HOST, self.port, timeout=timeout)
            c.request("GET", "/health")
            status = c.getresponse().status
            c.close()
        except (OSError, http.client.HTTPException):
            status = None
        return status, time.monotonic() - start

    def stop(self, timeout=30):
        """Seconds from SIGTERM to exit, or None when it was still running after `timeout`."""
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
            return round(time.monotonic() - start, 2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


class TrainingPage:
    """One lenet_mnist run serving its training page on a free loopback port (--ui-port 0)."""

    def __init__(self, binary, train_examples, save_path, startup_timeout=120):
        self.save_path = save_path
        self.output = []
        self.proc = subprocess.Popen(
            [binary, "--epochs", "1", "--train-examples", str(train_examples), "--test-examples", "500",
             "--progress", "0", "--ui-port", "0", "--save", save_path],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        self.port = None
        deadline = time.monotonic() + startup_timeout
        for line in self.proc.stdout:
            self.output.append(line)
            match = re.match(r"training page: http://127\.0\.0\.1:(\d+)/", line)
            if match:
                self.port = int(match.group(1))
                break
            if time.monotonic() > deadline:
                break
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("lenet_mnist printed no training page: " + "".join(self.output)[-400:])
        # Keeps reading, so that the sample never blocks on a full pipe.
        self.reader = threading.Thread(target=lambda: self.output.extend(self.proc.stdout), daemon=True)
        self.reader.start()

    memory_mb = Server.memory_mb

    def training(self):
        """Whether training is still under way (the sample prints its summary line after)."""
        return self.proc.poll() is None and not any(line.startswith("training: ") for line in self.output)

    def descriptors(self):
        try:
            return len(os.listdir("/proc/%d/fd" % self.proc.pid))
        except OSError:
            return None

    def health(self, timeout=5):
        """GET /stats.json: (status or None, seconds)."""
        start = time.monotonic()
        try:
            c = http.client.HTTPConnection(HOST, self.port, timeout=timeout)
            c.request("GET", "/stats.json")
            response = c.getresponse()
            response.read()
            status = response.status
            c.close()
        except (OSError, http.client.HTTPException):
            status = None
        return status, time.monotonic() - start

    def finish(self, timeout=600):
        """Waits for the run to end; what it reported."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5)
        text = "".join(self.output)
        seconds = re.search(r"training: 1 epoch\(s\) in ([0-9.]+) s", text)
        result = {"exit_status": self.proc.returncode,
                  "training_s": float(seconds.group(1)) if seconds else None,
                  "saved": "saved the model" in text and os.path.exists(self.save_path)}
        if self.proc.returncode != 0 or not result["saved"]:
            result["output_tail"] = text[-400:]
        return result


class ProcessWatcher(threading.Thread):
    """Samples a process's peak memory (VmHWM) and open file descriptors every 0.1 s."""

    def __init__(self, page):
        super().__init__(daemon=True)
        self.page, self.peak_mb, self.most_fds, self.done = page, None, 0, threading.Event()

    def run(self):
        while not self.done.is_set() and self.page.proc.poll() is None:
            self.peak_mb = self.page.memory_mb("VmHWM") or self.peak_mb
            self.most_fds = max(self.most_fds, self.page.descriptors() or 0)
            self.done.wait(0.1)

    def stop(self):
        self.done.set()
        self.join()
        return self.peak_mb, self.most_fds


class HealthProbe(threading.Thread):
    """Asks /health (the page: /stats.json) every 0.5 s (5 s timeout) while a case runs."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.results, self.done = server, [], threading.Event()

    def run(self):
        while not self.done.is_set():
            self.results.append(self.server.health(timeout=5))
            self.done.wait(0.5)

    def summary(self):
        self.done.set()
        self.join()
        ok = [t for s, t in self.results if s == 200]
        return {"probes": len(self.results), "answered": len(ok),
                "max_s": round(max((t for _, t in self.results), default=0), 3),
                "median_s": round(statistics.median(ok), 3) if ok else None}


def read_status(sock, timeout):
    """The status code of the first answer, or what happened instead; and the body (bytes)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data or len(data) < data.find(b"\r\n\r\n") + 4 + content_length(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        if not data:
            return "no answer in %d s" % timeout, b""
    except ConnectionResetError:
        if not data:
            return "reset", b""
    if not data.startswith(b"HTTP/1.1 "):
        return "closed" if not data else "garbage", b""
    return int(data[9:12]), data[data.find(b"\r\n\r\n") + 4:] if b"\r\n\r\n" in data else b""


def content_length(head):
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


def send_pieces(pieces, timeout=30):
    """Sends the pieces on one connection, then reads the answer. Returns a dict."""
    sock = socket.create_connection((HOST, SERVER.port))
    sent, start, note = 0, time.monotonic(), ""
    sock.settimeout(timeout)
    try:
        for piece in pieces:
            sock.sendall(piece)
            sent += len(piece)
    except (BrokenPipeError, ConnectionResetError, socket.timeout) as e:
        note = "server stopped reading (%s)" % type(e).__name__
    status, body = read_status(sock, 10)
    sock.close()
    result = {"status": status, "sent_mb": round(sent / 2**20, 2), "seconds": round(time.monotonic() - start, 2)}
    if body and isinstance(status, int) and status >= 400:
        try:
            result["reason"] = json.loads(body.decode("utf-8"))["error"][:100]
        except (ValueError, KeyError, TypeError):
            result["reason"] = "NOT JSON: %r" % body[:80]
    if note:
        result["note"] = note
    return result


def post_head(extra=b"Content-Type: application/json\r\n"):
    return b"POST /predict HTTP/1.1\r\nHost: localhost\r\n" + extra


def chunked_pieces(total_mb):
    yield post_head(b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"100000\r\n" + b"1" * 0x100000 + b"\r\n"
    for _ in range(total_mb):
        yield chunk
    yield b"0\r\n\r\n"


def chunked_json_array(total_mb):
    yield post_head(b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    yield b"d\r\n{\"pixels\": [0\r\n"
    piece = b",0" * (0x80000)
    for _ in range(total_mb):
        yield b"100000\r\n" + piece + b"\r\n"
    yield b"2\r\n]}\r\n0\r\n\r\n"


def many_headers(count):
    yield b"GET /health HTTP/1.1\r\nHost: localhost\r\n"
    block = b"X-Filler: abcd\r\n" * 10000
    for _ in range(count // 10000):
        yield block
    yield b"\r\n"


def long_header_line(mb):
    yield b"GET /health HTTP/1.1\r\nX-Long: "
    for _ in range(mb):
        yield b"a" * 2**20
    yield b"\r\n\r\n"


def gzip_bomb(gib):
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    zeros = b"\0" * 2**20
    body = b"".join(compressor.compress(zeros) for _ in range(gib * 1024)) + compressor.flush()
    return [post_head(b"Content-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
                      % len(body)), body]


def with_length(content_type, body):
    return post_head(b"Content-Type: " + content_type + b"\r\nContent-Length: %d\r\n\r\n" % len(body)) + body


def slow_clients(head_lines, body_clients, head_piece):
    """Opens `head_lines` connections that send `head_piece` (a header line, or a byte) at each
    tick and `body_clients` that send a whole head, then one body byte at each tick. Returns them,
    the start time and the tick function, which notes when the server closed each."""
    conns = []
    for i in range(head_lines + body_clients):
        s = socket.create_connection((HOST, SERVER.port))
        s.setblocking(False)
        if i < head_lines:
            s.send(b"POST /predict HTTP/1.1\r\nHost: localhost\r\n")
        else:
            s.send(post_head(b"Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n"))
        conns.append({"sock": s, "closed_at": None, "head": i < head_lines})
    start = time.monotonic()

    def tick():
        now = time.monotonic() - start
        for c in conns:
            if c["closed_at"] is not None:
                continue
            try:
                if c["sock"].recv(65536) == b"":
                    c["closed_at"] = now
                    continue
            except BlockingIOError:
                pass
            except OSError:
                c["closed_at"] = now
                continue
            try:
                c["sock"].send(head_piece if c["head"] else b"1")
            except OSError:
                c["closed_at"] = now

    return conns, start, tick


def run_slow(head_lines, body_clients, seconds, interval, sigterm_after=None, head_piece=b"X-Slow: 1\r\n"):
    conns, start, tick = slow_clients(head_lines, body_clients, head_piece)
    probe = HealthProbe(SERVER)
    probe.start()
    stopped_in, sigterm_at, next_tick = None, None, start
    while time.monotonic() - start < seconds:
        now = time.monotonic()
        if now >= next_tick:  # the slow clients go on after SIGTERM too, as long as the case lasts
            tick()
            next_tick += interval
        if sigterm_after is not None and sigterm_at is None and now - start >= sigterm_after:
            probe.done.set()
            sigterm_at = now
            SERVER.proc.send_signal(signal.SIGTERM)
        if sigterm_at is not None and SERVER.proc.poll() is not None:
            stopped_in = round(now - sigterm_at, 2)
            break
        time.sleep(0.01 if sigterm_at is not None else 0.05)
    if sigterm_at is not None and stopped_in is None:
        SERVER.stop(timeout=5)  # still running when the clients stopped: reported as such
    health = probe.summary()
    closed = [c["closed_at"] for c in conns if c["closed_at"] is not None]
    for c in conns:
        c["sock"].close()
    result = {"health": health, "slow_connections": len(conns), "closed_by_server": len(closed),
              "closed_after_s": [round(min(closed), 1), round(max(closed), 1)] if closed else None}
    if sigterm_after is not None:
        result["exit_after_sigterm_s"] = stopped_in if stopped_in is not None else \
            "still running after %d s (then killed)" % (seconds - sigterm_after)
    return result


def malformed():
    png = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 64
    cases = {
        "invalid UTF-8 in the body": with_length(b"application/json", b'{"pixels": ["\xff\xfe"]}'),
        "invalid UTF-8 in a key": with_length(b"application/json", b'{"pix\xc3\x28": 1}'),
        "invalid UTF-8 in the Content-Type": with_length(b"application/\xff\xfejson", b'{"pixels": []}'),
        "number 1e999": with_length(b"application/json", b'{"pixels": [1e999]}'),
        "PNG sent as application/json": with_length(b"application/json", png),
    }
    return {name: send_pieces([request]) for name, request in cases.items()}


def run_case(name, binary, model, action, results):
    global SERVER
    print("--", name, flush=True)
    SERVER = Server(binary, model)
    before = SERVER.memory_mb("VmRSS")
    outcome = action()
    after, peak = SERVER.memory_mb("VmRSS"), SERVER.memory_mb("VmHWM")
    status, seconds = SERVER.health(timeout=5) if SERVER.proc.poll() is None else (None, 0)
    exit_s = SERVER.stop() if SERVER.proc.poll() is None else outcome.get("exit_after_sigterm_s")
    result = {"case": name, **outcome, "rss_mb_before": before, "rss_mb_after": after, "rss_mb_peak": peak,
              "health_after": {"status": status, "seconds": round(seconds, 3)}, "exit_after_sigterm_s": exit_s}
    print(json.dumps(result), flush=True)
    results.append(result)


def start_up_cases(binary, model, huge_input_model, results):
    tmp = tempfile.mkdtemp(prefix="dl4cpp-abuse-")
    try:
        odd = os.path.join(tmp, 'a "quoted" \\ name.dl4cpp')
        shutil.copy(model, odd)
        print("-- model path with quotes and a backslash", flush=True)
        try:
            server = Server(binary, odd, startup_timeout=30)
            c = http.client.HTTPConnection(HOST, server.port, timeout=5)
            c.request("GET", "/health")
            body = c.getresponse().read()
            served = json.loads(body)["model"]
            outcome = {"started": True, "health_model_equals_path": served == odd, "exit_after_sigterm_s": server.stop()}
        except (RuntimeError, ValueError, KeyError) as e:
            outcome = {"started": False, "error": str(e)[:200]}
        results.append({"case": "model path with quotes and a backslash", **outcome})
        print(json.dumps(results[-1]), flush=True)
    finally:
        shutil.rmtree(tmp)

    print("-- model with a 16384x16384 input", flush=True)
    start = time.monotonic()
    proc = subprocess.run([binary, "--model", huge_input_model, "--port", str(free_port()), "--workers", "1"],
                          capture_output=True, timeout=120)
    results.append({"case": "model with a 16384x16384 input", "exit_status": proc.returncode,
                    "seconds": round(time.monotonic() - start, 2),
                    "message": (proc.stdout + proc.stderr).decode(errors="replace").strip()[-300:]})
    print(json.dumps(results[-1]), flush=True)


def streamed_body(head, total_bytes):
    """`head`, then `total_bytes` of zeros in 1 MiB pieces: never held in memory whole."""
    yield head
    block = b"\0" * 2**20
    for _ in range(total_bytes // len(block)):
        yield block


def held_while_training(count):
    """Opens `count` idle connections to the page and holds them until training ends, asking the
    page meanwhile. Reports how many the page closed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < count + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(count + 256, hard), hard))
    probe = HealthProbe(SERVER)
    probe.start()
    conns, refused = [], 0
    for _ in range(count):
        try:
            conns.append(socket.create_connection((HOST, SERVER.port), timeout=5))
        except OSError:
            refused += 1
    while SERVER.training():
        time.sleep(0.2)
    health = probe.summary()
    closed = 0
    for c in conns:
        c.setblocking(False)
        try:
            closed += c.recv(65536) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        c.close()
    return {"health": health, "connections": len(conns), "connect_failed": refused,
            "closed_by_server": closed}


def trickling_while_training(clients, interval):
    """`clients` connections each sending a header byte every `interval` s until training ends."""
    probe = HealthProbe(SERVER)
    probe.start()
    conns = []
    for _ in range(clients):
        s = socket.create_connection((HOST, SERVER.port))
        s.setblocking(False)
        s.send(b"GET /stats.json HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        conns.append({"sock": s, "closed": False})
    while SERVER.training():
        for c in conns:
            if c["closed"]:
                continue
            try:
                if c["sock"].recv(65536) == b"":
                    c["closed"] = True
                    continue
            except BlockingIOError:
                pass
            except OSError:
                c["closed"] = True
                continue
            try:
                c["sock"].send(b"a")
            except OSError:
                c["closed"] = True
        time.sleep(interval)
    health = probe.summary()
    for c in conns:
        c["sock"].close()
    return {"health": health, "connections": clients, "closed_by_server": sum(c["closed"] for c in conns)}


def unframed_post():
    """A POST without Content-Length whose client keeps its side open: when the answer came and
    when the server closed."""
    sock = socket.create_connection((HOST, SERVER.port))
    start = time.monotonic()
    sock.sendall(b"POST /stats.json HTTP/1.1\r\nHost: localhost\r\n\r\n")
    status, _ = read_status(sock, 10)
    answered = time.monotonic() - start
    sock.settimeout(10)
    try:
        while sock.recv(65536):
            pass
        closed = round(time.monotonic() - start, 2)
    except socket.timeout:
        closed = "still open after 10 s"
    except OSError:
        closed = round(time.monotonic() - start, 2)
    sock.close()
    return {"status": status, "answer_s": round(answered, 3), "closed_by_server_after_s": closed}


def run_page_case(name, binary, train_examples, action, results):
    global SERVER
    print("-- page:", name, flush=True)
    tmp = tempfile.mkdtemp(prefix="dl4cpp-page-abuse-")
    try:
        SERVER = TrainingPage(binary, train_examples, os.path.join(tmp, "lenet.dl4cpp"))
        before = SERVER.memory_mb("VmRSS")
        watcher = ProcessWatcher(SERVER)
        watcher.start()
        outcome = action()
        training = SERVER.finish()
        peak, fds = watcher.stop()
    finally:
        shutil.rmtree(tmp)
    result = {"case": "page: " + name, **outcome, "rss_mb_before": before, "rss_mb_peak": peak,
              "most_fds": fds, "training": training}
    print(json.dumps(result), flush=True)
    results.append(result)


def process_cpu_s(pid):
    """User + system CPU seconds of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def page_cpu_case(binary, results):
    """The CPU the page itself spends on hostile clients, apart from training (whose time varies
    too much on a shared machine to show it): a short run keeps serving (--ui-linger) and its CPU
    time is measured over windows with and without clients."""
    print("-- page: CPU of the page under clients, after training", flush=True)
    tmp = tempfile.mkdtemp(prefix="dl4cpp-page-cpu-")
    proc = subprocess.Popen([binary, "--epochs", "1", "--train-examples", "512", "--test-examples", "100",
                             "--progress", "0", "--ui-port", "0", "--ui-linger", "120",
                             "--save", os.path.join(tmp, "lenet.dl4cpp")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    port = None
    for line in proc.stdout:
        match = re.match(r"training page: http://127\.0\.0\.1:(\d+)/", line)
        port = int(match.group(1)) if match else port
        if line.startswith("training done"):
            break
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()

    def window(seconds, work=lambda: time.sleep(0.1)):
        start_cpu, end = process_cpu_s(proc.pid), time.monotonic() + seconds
        while time.monotonic() < end:
            work()
        return round(process_cpu_s(proc.pid) - start_cpu, 2)

    def descriptors():
        return len(os.listdir("/proc/%d/fd" % proc.pid))

    result = {"case": "page: CPU of the page under clients, after training"}
    result["quiet_5s_cpu_s"] = window(5)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 2300:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2300, hard), hard))
    start_cpu = process_cpu_s(proc.pid)
    idle = [socket.create_connection((HOST, port)) for _ in range(2000)]
    trickling = []
    for _ in range(16):
        s = socket.create_connection((HOST, port))
        s.setblocking(False)
        s.send(b"GET /stats.json HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        trickling.append(s)
    result["opening_2000_idle_16_trickling_cpu_s"] = round(process_cpu_s(proc.pid) - start_cpu, 2)
    result["fds_while_held"] = descriptors()

    def trickle():
        for s in trickling:
            try:
                s.send(b"a")
            except OSError:
                pass
        time.sleep(0.5)

    result["holding_them_4s_cpu_s"] = window(4, trickle)
    for s in idle + trickling:
        s.close()
    flood = [0]

    def connect_and_close():
        socket.create_connection((HOST, port)).close()
        flood[0] += 1

    result["flood_5s_cpu_s"] = window(5, connect_and_close)
    result["flood_connections"] = flood[0]
    result["fds_after"] = descriptors()
    proc.kill()
    proc.wait()
    shutil.rmtree(tmp)
    print(json.dumps(result), flush=True)
    results.append(result)


def page_cases(binary, train_examples, results):
    big = 3 * 2**30
    cases = [
        ("no client (baseline)", lambda: {}),
        ("POST of 3 GiB", lambda: send_pieces(streamed_body(
            b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % big, big))),
        ("GET with a 3 GiB body", lambda: send_pieces(streamed_body(
            b"GET /stats.json HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % big, big))),
        ("POST without Content-Length, client side left open", unframed_post),
        ("1,000,000 header lines", lambda: send_pieces(many_headers(1_000_000))),
        ("2,000 idle connections held until training ends", lambda: held_while_training(2000)),
        ("16 clients trickling a header byte every 0.5 s", lambda: trickling_while_training(16, 0.5)),
    ]
    for name, action in cases:
        run_page_case(name, binary, train_examples, action, results)
    page_cpu_case(binary, results)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", help="mnist_inference_server (its cases run when given)")
    parser.add_argument("--model")
    parser.add_argument("--huge-input-model")
    parser.add_argument("--page-sample", help="lenet_mnist (the training page's cases run when given)")
    parser.add_argument("--page-train-examples", type=int, default=16384,
                        help="examples each page case trains on: enough for the case to last")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.server and not (args.model and args.huge_input_model):
        parser.error("--server needs --model and --huge-input-model")
    results = []
    if args.page_sample:
        page_cases(args.page_sample, args.page_train_examples, results)
    if args.server:
        inference_cases(args, results)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print_table(results)
    print("wrote", args.out)


def inference_cases(args, results):
    cases = [
        ("chunked upload of 400 MiB", lambda: send_pieces(chunked_pieces(400))),
        ("chunked JSON array of 40 MiB", lambda: send_pieces(chunked_json_array(40))),
        ("Content-Length 2 MiB", lambda: send_pieces([post_head(b"Content-Type: application/json\r\n"
                                                               b"Content-Length: 2097152\r\n\r\n"),
                                                     b" " * 2097152])),
        ("gzip body inflating to 1 GiB", lambda: send_pieces(gzip_bomb(1))),
        ("1,000,000 header lines", lambda: send_pieces(many_headers(1_000_000))),
        ("one 64 MiB header line", lambda: send_pieces(long_header_line(64))),
        ("malformed bodies and headers", malformed),
        ("16 slow heads (a line every 3 s, 20 s)", lambda: run_slow(16, 0, 20, 3)),
        ("16 slow bodies (a byte every 1 s, 20 s)", lambda: run_slow(0, 16, 20, 1)),
        ("1 client trickling its head, a byte every 1 s (30 s)", lambda: run_slow(1, 0, 30, 1, head_piece=b"a")),
        ("SIGTERM with 16 slow heads and 4 slow bodies", lambda: run_slow(16, 4, 30, 1, sigterm_after=3)),
    ]
    for name, action in cases:
        run_case(name, args.server, args.model, action, results)
    start_up_cases(args.server, args.model, args.huge_input_model, results)


def print_page_table(results):
    print("\n%-52s %-24s %-24s %8s %6s %-16s" % ("training page case", "status", "GET during (max s)", "peak MB",
                                                "fds", "training s / saved"))
    for r in results:
        if "training" not in r:
            print("%-52s %s" % (r["case"][6:58], {k: v for k, v in r.items() if k != "case"}))
            continue
        if "health" in r:
            status = "%d/%d closed by server" % (r["closed_by_server"], r["connections"])
            health = "%d/%d answered (%.2f)" % (r["health"]["answered"], r["health"]["probes"], r["health"]["max_s"])
        else:
            status, health = str(r.get("status", "-")), "-"
        t = r["training"]
        training = "%s / %s" % (t["training_s"], "saved" if t["saved"] else "NOT SAVED (exit %s)" % t["exit_status"])
        print("%-52s %-24s %-24s %8s %6s %-16s" % (r["case"][6:58], status[:24], health, r["rss_mb_peak"],
                                                 r["most_fds"], training))


def print_table(results):
    page = [r for r in results if r["case"].startswith("page: ")]
    if page:
        print_page_table(page)
    results = [r for r in results if not r["case"].startswith("page: ")]
    if not results:
        return
    print("\n%-52s %-22s %8s %23s %-24s %7s" % ("case", "status", "sent MB", "RSS MB before/after/peak",
                                               "/health during (max s)", "exit s"))
    for r in results:
        if "rss_mb_before" not in r:
            print("%-52s %s" % (r["case"], {k: v for k, v in r.items() if k != "case"}))
            continue
        if "health" in r:
            status = "%d/%d closed by server" % (r["closed_by_server"], r["slow_connections"])
            health = "%d/%d answered (%.2f)" % (r["health"]["answered"], r["health"]["probes"], r["health"]["max_s"])
        elif "status" in r:
            status, health = str(r["status"]), "-"
        else:  # several requests
            status = " ".join(str(v["status"]) for v in r.values() if isinstance(v, dict) and "sent_mb" in v)
            health = "-"
        memory = "%s/%s/%s" % (r["rss_mb_before"], r["rss_mb_after"], r["rss_mb_peak"])
        print("%-52s %-22s %8s %23s %-24s %7s" % (r["case"][:52], status[:22], r.get("sent_mb", "-"), memory, health,
                                                  r["exit_after_sigterm_s"]))


SERVER = None
if __name__ == "__main__":
    sys.exit(main())
