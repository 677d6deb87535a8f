"""The cases of the hostile pass of issue 25, each a scenario with a
server (or two, or a Redis) of its own, for harness.py.

Each scenario returns (status, seconds, peak RSS in kB, still serves, note):
status is what the case is judged on (an HTTP status, a count of statuses,
"crash ..." or "hang ..."), seconds the time of the hostile part, the peak
RSS the server's VmHWM, 'still serves' whether a small chat is answered
afterwards. The models come from `go run ./scripts/hostile/models DIR`
(HOSTILE_MODELS, default .build/hostile) and the tests' tiny Qwen3.
"""

import base64
import collections
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import zlib
import http.client

import harness as H

MODELS = os.environ.get("HOSTILE_MODELS", os.path.join(H.ROOT, ".build", "hostile"))
KEY = "sk-hostile-scenario-unlimited"
ADMIN = "admin-key-of-the-hostile-harness"


def cpu_s(pid):
    """CPU seconds (user + system) the process has used."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def start(binary, logpath, args, ready=60):
    """A server with args (besides -addr and the scenario key); None and
    the reason when it did not become ready."""
    srv = H.Server(binary, logpath, ["-api-key", f"{KEY}:unlimited"] + args)
    try:
        srv.wait_ready(timeout=ready)
    except RuntimeError as e:
        return srv, str(e)
    return srv, None


def req(srv, method, path, body=None, key=KEY, timeout=H.REQ_TIMEOUT, headers=None):
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {key}"
    raw = H.encode(body) if body is not None and not isinstance(body, bytes) else body
    return H.http_request(srv, method, path, raw, h, timeout=timeout)


def chat_body(model, content, max_tokens=8):
    return {"model": model, "max_tokens": max_tokens, "temperature": 0, "messages": [{"role": "user", "content": content}]}


def image_chat(model, mime, data):
    url = f"data:{mime};base64," + base64.b64encode(data).decode()
    return chat_body(model, [{"type": "text", "text": "What is in the picture?"},
                             {"type": "image_url", "image_url": {"url": url}}], 4)


def finish(srv, status, dt, note, model):
    """Checks the server is alive and still answers, stops it."""
    time.sleep(0.3)
    if not srv.alive():
        status = f"crash ({srv.exit_desc()}; client saw {status})"
        serves = "no (dead)"
    else:
        try:
            st, _, _, _ = req(srv, "POST", "/v1/chat/completions", chat_body(model, "hi", 1), timeout=30)
            serves = "yes" if st == 200 else f"no ({st})"
        except Exception as e:  # noqa: BLE001
            serves = f"no ({type(e).__name__})"
    peak = srv.stop()
    return status, dt, peak, serves, note


def counts(statuses):
    c = collections.Counter(statuses)
    return ", ".join(f"{n}×{s}" for s, n in sorted(c.items(), key=lambda kv: str(kv[0])))


# 1. Two Go-engine models and a llama.cpp one under 60 concurrent chats.
def go_engines(binary, logpath):
    args = ["-model", f"go-qwen35={MODELS}/go-qwen35.gguf", "-model", f"go-gemma4={MODELS}/go-gemma4.gguf",
            "-model", f"cpp-qwen3={H.MODEL}", "-ctx", "512"]
    srv, err = start(binary, logpath, args)
    if err:
        return "server did not start", 0, srv.stop(), "no", err
    ids = ["go-qwen35", "go-gemma4", "cpp-qwen3"]
    out = [None] * 60

    def one(i):
        try:
            st, _, _, data = req(srv, "POST", "/v1/chat/completions", chat_body(ids[i % 3], f"Question {i}: what next?", 16))
            out[i] = st
        except Exception as e:  # noqa: BLE001
            out[i] = type(e).__name__
    t0 = time.time()
    ts = [threading.Thread(target=one, args=(i,)) for i in range(60)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    dt = time.time() - t0
    return finish(srv, counts(out), dt, "60 chats, 20 per model, 16 tokens each", "cpp-qwen3")


def jpeg_scan_bomb(scans, side=4096):
    """A progressive JPEG of side×side pixels, one grey component, with
    scans empty DC scans: every decoder that honours them walks the whole
    image once per scan."""
    seg = lambda marker, body: struct.pack(">BBH", 0xFF, marker, len(body) + 2) + body
    out = b"\xff\xd8"
    out += seg(0xDB, b"\x00" + bytes([1] * 64))                        # DQT
    out += seg(0xC2, struct.pack(">BHHB", 8, side, side, 1) + b"\x01\x11\x00")  # SOF2
    out += seg(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00")          # DHT: DC table 0, one code for category 0
    sos = seg(0xDA, b"\x01\x01\x00\x00\x00\x00")                        # SOS: DC first scan of component 1
    out += sos * scans
    return out + b"\xff\xd9"


def png_zlib_bomb(mib):
    """A 1×1 grey PNG whose IDAT inflates to mib MiB of zeros."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    c = zlib.compressobj(9)
    zero = bytes(1 << 20)
    idat = b"".join(c.compress(zero) for _ in range(mib)) + c.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def small_png():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes([x * 16 % 256, 64, 128] * 16) for x in range(16))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def vision_args():
    return ["-model", f"vis={MODELS}/vision.gguf", "-projector", f"vis={MODELS}/vision-mmproj.gguf"]


# 2 and 3. An image bomb, with a small image request sent 1 s after it.
def image_bomb(mime, data, label):
    def run(binary, logpath):
        srv, err = start(binary, logpath, vision_args())
        if err:
            return "server did not start", 0, srv.stop(), "no", err
        cpu0 = cpu_s(srv.p.pid)
        res = {}

        def bomb():
            try:
                res["bomb"] = req(srv, "POST", "/v1/chat/completions", image_chat("vis", mime, data), timeout=120)[:2]
            except Exception as e:  # noqa: BLE001
                res["bomb"] = (type(e).__name__, 120)
        t = threading.Thread(target=bomb)
        t0 = time.time()
        t.start()
        time.sleep(1)
        try:
            st, dt_small, _, _ = req(srv, "POST", "/v1/chat/completions", image_chat("vis", "image/png", small_png()), timeout=120)
        except Exception as e:  # noqa: BLE001
            st, dt_small = type(e).__name__, 120
        t.join()
        dt = time.time() - t0
        cpu = cpu_s(srv.p.pid)
        used = f"{cpu - cpu0:.1f} s CPU" if cpu is not None and cpu0 is not None else "CPU ?"
        status, bomb_dt = res["bomb"]
        note = f"{label}, {len(data) / 1024:.0f} KB; bomb answered in {bomb_dt:.1f} s, {used} in all; small image meanwhile: {st} in {dt_small:.1f} s"
        return finish(srv, status, dt, note, "vis")
    return run


# 4. A cache entry with a valid checksum and a damaged state.
CASTAGNOLI = None


def crc32c(data):
    global CASTAGNOLI
    if CASTAGNOLI is None:
        CASTAGNOLI = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            CASTAGNOLI.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = CASTAGNOLI[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


LONG_PROMPT = " ".join(f"word{i}" for i in range(450))


def cache_entry(binary, logpath, cache):
    """Serves one long prompt with -cache-dir cache so that an entry is
    saved; returns its path (or None)."""
    srv, err = start(binary, logpath + ".seed", ["-model", f"core={H.MODEL}", "-cache-dir", cache, "-ctx", "4096"])
    if err:
        srv.stop()
        return None
    st = req(srv, "POST", "/v1/chat/completions", chat_body("core", LONG_PROMPT, 2))[0]
    if st != 200:
        srv.stop()
        return None
    time.sleep(1)
    srv.stop()
    for root, _, files in os.walk(cache):
        for f in files:
            if not f.startswith("."):
                return os.path.join(root, f)
    return None


def damage(path, field):
    """Rewrites the entry's state: the first cell's position -1, or a cell
    count of 2^31, with the checksum made valid again."""
    with open(path, "rb") as f:
        b = bytearray(f.read())
    klen = struct.unpack_from("<I", b, 12)[0]
    ntok = struct.unpack_from("<I", b, 16 + klen)[0]
    state = 16 + klen + 12 + 4 * ntok
    if field == "pos":
        struct.pack_into("<i", b, state + 8, -1)  # n_stream, cell_count, then the first cell's pos
    else:
        struct.pack_into("<I", b, state + 4, 1 << 31)
    body = bytes(b[:-4])
    with open(path, "wb") as f:
        f.write(body + struct.pack("<I", crc32c(body)))


def damaged_entry(field):
    def run(binary, logpath):
        cache = tempfile.mkdtemp(prefix="hostile-cache-")
        try:
            path = cache_entry(binary, logpath, cache)
            if not path:
                return "harness error", 0, None, "no", "no cache entry was saved"
            damage(path, field)
            t0 = time.time()
            srv, err = start(binary, logpath, ["-model", f"core={H.MODEL}", "-cache-dir", cache, "-ctx", "4096"], ready=60)
            if err:
                return f"start-up: {err[:80]}", time.time() - t0, srv.stop(), "no", ""
            st, dt, _, data = req(srv, "POST", "/v1/chat/completions", chat_body("core", LONG_PROMPT, 2), timeout=120)
            left = os.path.exists(path)
            res = finish(srv, st, time.time() - t0, f"entry {'kept' if left else 'removed'}; " + H.short(data, 100), "core")
            # A second start: the entry must not crash it either.
            srv2, err2 = start(binary, logpath + ".again", ["-model", f"core={H.MODEL}", "-cache-dir", cache, "-ctx", "4096"])
            again = "second start: " + ("failed" if err2 else "ok")
            srv2.stop()
            return res[0], res[1], res[2], res[3], res[4] + "; " + again
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return run


# 5. A FIFO named like a cache entry, at start-up and while serving.
def fifo_entry(when):
    def run(binary, logpath):
        cache = tempfile.mkdtemp(prefix="hostile-cache-")
        try:
            path = cache_entry(binary, logpath, cache)
            if not path:
                return "harness error", 0, None, "no", "no cache entry was saved"
            fifo = os.path.join(os.path.dirname(path), "f" * 64)
            args = ["-model", f"core={H.MODEL}", "-cache-dir", cache, "-ctx", "4096"]
            if when == "start":
                os.remove(path)
                os.mkfifo(path)
                t0 = time.time()
                srv, err = start(binary, logpath, args, ready=30)
                if err:
                    return "hang at start-up (not ready in 30 s)", time.time() - t0, srv.stop(), "no", ""
                st, dt, _, _ = req(srv, "POST", "/v1/chat/completions", chat_body("core", LONG_PROMPT, 2), timeout=60)
                return finish(srv, st, time.time() - t0, "FIFO in place of the entry", "core")
            srv, err = start(binary, logpath, args)
            if err:
                return "server did not start", 0, srv.stop(), "no", err
            os.remove(path)
            os.mkfifo(path)
            t0 = time.time()
            try:
                st = req(srv, "POST", "/v1/chat/completions", chat_body("core", LONG_PROMPT, 2), timeout=30)[0]
            except Exception as e:  # noqa: BLE001
                st = f"timeout ({type(e).__name__})"
            dt = time.time() - t0
            t1 = time.time()
            srv.p.send_signal(signal.SIGTERM)
            while srv.alive() and time.time() - t1 < 15:
                time.sleep(0.1)
            term = "SIGTERM ended it" if not srv.alive() else "SIGTERM ignored for 15 s"
            return st, dt, srv.stop(), "-", f"FIFO made while serving; {term}"
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return run


# 6. Wrong sign-ins for random owners beside a real user's.
def sign_in(srv, owner, password, source="127.0.0.1"):
    """One console sign-in from the loopback address source; its status."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30, source_address=(source, 0))
    c.request("GET", "/login")
    r = c.getresponse()
    page = r.read().decode("utf-8", "replace")
    cookie = r.getheader("Set-Cookie", "").split(";", 1)[0]
    i = page.find('name="csrf"')
    j = page.rfind("value=\"", 0, i) if page.find("value=\"", i) < 0 else page.find("value=\"", i)
    token = page[j + 7:page.find('"', j + 7)]
    body = urllib.parse.urlencode({"owner": owner, "password": password, "csrf": token})
    c.request("POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def accounts_args():
    """A server of the tiny model with the admin API on a fresh bbolt file."""
    return ["-model", f"core={H.MODEL}", "-admin-key", ADMIN, "-accounts", tempfile.mktemp(prefix="hostile-accounts-")]


def signin_flood(attackers):
    def run(binary, logpath):
        srv, err = start(binary, logpath, accounts_args())
        if err:
            return "server did not start", 0, srv.stop(), "no", err
        st = req(srv, "POST", "/v1/admin/accounts", {"id": "acct_real", "name": "Real", "owner": "real@example.com",
                                                    "password": "correct horse battery staple"}, key=ADMIN)[0]
        if st not in (200, 201):
            return f"harness error (account {st})", 0, srv.stop(), "-", ""
        stop = time.time() + 10
        bad = collections.Counter()

        def attack(source):
            while time.time() < stop:
                try:
                    bad[sign_in(srv, f"nobody{random.getrandbits(48)}@example.com", "wrong", source)] += 1
                except Exception as e:  # noqa: BLE001
                    bad[type(e).__name__] += 1
        # Each attacking client from a loopback address of its own.
        ts = [threading.Thread(target=attack, args=(f"127.0.0.{2 + i}",)) for i in range(attackers)]
        [t.start() for t in ts]
        real = []
        t0 = time.time()
        while time.time() < stop:
            try:
                real.append(sign_in(srv, "real@example.com", "correct horse battery staple"))
            except Exception as e:  # noqa: BLE001
                real.append(type(e).__name__)
            time.sleep(0.2)
        [t.join() for t in ts]
        ok = sum(s == 303 for s in real)
        return finish(srv, f"{ok}/{len(real)} real sign-ins succeeded", time.time() - t0,
                      f"{attackers} attacking clients: {counts(bad.elements())}; real: {counts(real)}", "core")
    return run


# 7-9. Redis: its data lost, its outage; payment ids.
class Redis:
    def __init__(self, dirpath):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.dir = dirpath
        self.p = None

    def start(self):
        self.p = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no", "--dir", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)

    def cmd(self, *words):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.sendall(("*%d\r\n" % len(words) + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)).encode())
        out = s.recv(1 << 16)
        s.close()
        return out

    def stop(self):
        """Stops Redis, its data saved for the next start."""
        if self.p:
            try:
                self.cmd("SAVE")
            except OSError:
                pass
            self.p.terminate()
            self.p.wait()
            self.p = None


def with_redis(body):
    def run(binary, logpath):
        if not shutil.which("redis-server"):
            return "skipped (no redis-server)", 0, None, "-", ""
        d = tempfile.mkdtemp(prefix="hostile-redis-")
        r = Redis(d)
        r.start()
        try:
            return body(binary, logpath, r)
        finally:
            r.stop()
            shutil.rmtree(d, ignore_errors=True)
    return run


def redis_args(r):
    return ["-model", f"core={H.MODEL}", "-redis", f"127.0.0.1:{r.port}", "-admin-key", ADMIN]


def new_key(srv, account):
    """A key of a new account; None when either could not be made."""
    req(srv, "POST", "/v1/admin/accounts", {"id": account, "name": account}, key=ADMIN)
    st, _, _, data = req(srv, "POST", "/v1/admin/api-keys", {"name": "k", "account": account}, key=ADMIN)
    return json.loads(data)["key"] if st in (200, 201) else None


def redis_flushed(binary, logpath, r):
    srv, err = start(binary, logpath, redis_args(r))
    if err:
        return "server did not start", 0, srv.stop(), "no", err
    old = new_key(srv, "acct_before")
    r.cmd("FLUSHALL")
    fresh = new_key(srv, "acct_after")
    srv.stop()
    t0 = time.time()
    srv, err = start(binary, logpath + ".restart", redis_args(r))
    if err:
        return "refused to start", time.time() - t0, srv.stop(), "-", err[:120]
    res = []
    for name, k in (("key made before FLUSHALL", old), ("key made after", fresh)):
        res.append(f"{name}: {req(srv, 'POST', '/v1/chat/completions', chat_body('core', 'hi', 1), key=k)[0] if k else 'not made'}")
    return finish(srv, "; ".join(res), time.time() - t0, "FLUSHALL while serving, then a restart", "core")


def redis_down(binary, logpath, r):
    srv, err = start(binary, logpath, redis_args(r))
    if err:
        return "server did not start", 0, srv.stop(), "no", err
    r.stop()
    t0 = time.time()
    st, dt, hdrs, data = req(srv, "POST", "/v1/chat/completions", chat_body("core", "hi", 1), timeout=30)
    ready = req(srv, "GET", "/readyz", key=None, timeout=30)[0]
    note = f"Retry-After: {hdrs.get('retry-after', '-')}; /readyz {ready}; " + H.short(data, 100)
    r.start()
    time.sleep(1)
    back = req(srv, "POST", "/v1/chat/completions", chat_body("core", "hi", 1), timeout=30)[0]
    return finish(srv, st, time.time() - t0, note + f"; after Redis returned: {back}", "core")


def payment_twice(binary, logpath):
    srv, err = start(binary, logpath, accounts_args())
    if err:
        return "server did not start", 0, srv.stop(), "no", err
    t0 = time.time()
    out = []
    for a in ("acct_one", "acct_two"):
        req(srv, "POST", "/v1/admin/accounts", {"id": a, "name": a}, key=ADMIN)
        st, _, _, data = req(srv, "POST", "/v1/admin/credits", {"id": "pay_same", "account": a, "amount_usd": "50"}, key=ADMIN)
        out.append(st)
        if st == 200:
            out[-1] = f"{st} (credits {json.loads(data).get('credits_usd')})"
    return finish(srv, f"credits to two accounts: {out[0]}, {out[1]}", time.time() - t0, "one payment id", "core")


def cases():
    """(name, runner) of every scenario."""
    return [
        ("25.1 60 chats over two Go-engine models and a llama.cpp one", go_engines),
        ("25.2 progressive JPEG, 4096², 20,000 empty scans", image_bomb("image/jpeg", jpeg_scan_bomb(20000), "scan bomb")),
        ("25.3 PNG 1×1 declared, IDAT inflating to 2.5 GB", image_bomb("image/png", png_zlib_bomb(2500), "zlib bomb")),
        ("25.4a cache entry, valid checksum, a cell at position -1", damaged_entry("pos")),
        ("25.4b cache entry, valid checksum, 2^31 cells", damaged_entry("cells")),
        ("25.5a FIFO named like a cache entry, at start-up", fifo_entry("start")),
        ("25.5b FIFO named like a cache entry, made while serving", fifo_entry("serving")),
        ("25.6a sign-ins: 1 client of wrong logins for random owners", signin_flood(1)),
        ("25.6b sign-ins: 4 clients of wrong logins", signin_flood(4)),
        ("25.6c sign-ins: 16 clients of wrong logins", signin_flood(16)),
        ("25.7 Redis FLUSHALL, then a restart", with_redis(redis_flushed)),
        ("25.8 one payment id on two accounts", payment_twice),
        ("25.9 Redis down", with_redis(redis_down)),
    ]
