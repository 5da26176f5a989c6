package dev.fencing.benchmark.compare;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP relay that can stop passing bytes, in both directions, while keeping every
 * connection open: what a lock service sees of a client whose process is paused. Used for clients
 * whose library renews their session or lease in the background (ZooKeeper, etcd), which a paused
 * thread alone would not stop.
 */
final class FreezableProxy implements AutoCloseable {
  private final InetSocketAddress target;
  private final ServerSocket server;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final Object gate = new Object();
  private boolean frozen;
  private volatile boolean closed;

  FreezableProxy(InetSocketAddress target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    start("proxy-accept-" + port(), this::acceptLoop);
  }

  /** The local port clients connect to instead of the target's. */
  int port() {
    return server.getLocalPort();
  }

  /** From now on, bytes wait in the relay, undelivered. */
  void freeze() {
    synchronized (gate) {
      frozen = true;
    }
  }

  /** Delivers what waited, and everything after it. */
  void thaw() {
    synchronized (gate) {
      frozen = false;
      gate.notifyAll();
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    thaw();
    server.close();
    for (Socket s : sockets) {
      s.close();
    }
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(target.getAddress(), target.getPort());
        sockets.add(client);
        sockets.add(upstream);
        start("proxy-up-" + port(), () -> pump(client, upstream));
        start("proxy-down-" + port(), () -> pump(upstream, client));
      } catch (IOException e) {
        if (!closed) {
          continue;
        }
        return;
      }
    }
  }

  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[8192];
    try (from;
        to) {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buffer)) >= 0) {
        awaitThawed();
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException | InterruptedException e) {
      // one side went away (or the relay closed): the other side's pump ends as well
    } finally {
      sockets.remove(from);
      sockets.remove(to);
    }
  }

  private void awaitThawed() throws InterruptedException {
    synchronized (gate) {
      while (frozen && !closed) {
        gate.wait();
      }
    }
  }

  private static void start(String name, Runnable task) {
    Thread thread = new Thread(task, name);
    thread.setDaemon(true);
    thread.start();
  }
}
