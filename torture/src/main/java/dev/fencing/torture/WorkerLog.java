package dev.fencing.torture;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one worker saw, appended to its own file and handed to the operating system before the
 * worker goes on (a write is acknowledged in the log only after its commit returned; a refusal only
 * after the exception arrived). One line per event:
 *
 * <pre>
 * T resource token              an acquisition returned this token
 * A resource token seq n        a write committed (commit returned)
 * R resource token seq sqlstate a write was refused
 * E seq sqlstate message        any other failure (connection lost, server down, ...)
 * </pre>
 */
final class WorkerLog implements AutoCloseable {
  /** A token an acquisition returned to {@code worker}. */
  record Acquisition(int worker, String resource, long token) {}

  /** A write {@code worker} saw committed. */
  record Ack(int worker, String resource, long token, long seq, long n) {}

  /** A write {@code worker} saw refused by the fence. */
  record Refusal(int worker, String resource, long token, long seq, String sqlState) {}

  /** Everything one worker's log says. */
  record Entries(
      List<Acquisition> acquisitions,
      List<Ack> acks,
      List<Refusal> refusals,
      Map<String, Integer> errors) {
    static final Entries NONE = new Entries(List.of(), List.of(), List.of(), Map.of());

    /** These entries followed by {@code more}'s. */
    Entries plus(Entries more) {
      Map<String, Integer> allErrors = new TreeMap<>(errors);
      more.errors.forEach((k, v) -> allErrors.merge(k, v, Integer::sum));
      return new Entries(
          concat(acquisitions, more.acquisitions),
          concat(acks, more.acks),
          concat(refusals, more.refusals),
          allErrors);
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
      List<T> all = new ArrayList<>(a);
      all.addAll(b);
      return List.copyOf(all);
    }
  }

  private final OutputStream out;

  private WorkerLog(OutputStream out) {
    this.out = out;
  }

  static WorkerLog open(Path file) throws IOException {
    return new WorkerLog(new FileOutputStream(file.toFile(), true));
  }

  void acquired(String resource, long token) throws IOException {
    append("T " + resource + " " + token);
  }

  void acknowledged(String resource, long token, long seq, long n) throws IOException {
    append("A " + resource + " " + token + " " + seq + " " + n);
  }

  void refused(String resource, long token, long seq, String sqlState) throws IOException {
    append("R " + resource + " " + token + " " + seq + " " + sqlState);
  }

  void error(long seq, Exception e) throws IOException {
    String state = e instanceof SQLException sql ? String.valueOf(sql.getSQLState()) : "-";
    String message = String.valueOf(e.getMessage()).replaceAll("\\s+", " ");
    append("E " + seq + " " + state + " " + e.getClass().getSimpleName() + ": " + message);
  }

  // Unbuffered: each line is in the operating system's hands before the worker goes on, so it
  // survives the worker being paused or killed.
  private synchronized void append(String line) throws IOException {
    out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  @Override
  public void close() throws IOException {
    out.close();
  }

  /** Reads the log of {@code worker}; a torn last line (the worker was killed) is ignored. */
  static Entries read(int worker, Path file) {
    return read(worker, file, Integer.MAX_VALUE);
  }

  /** How many complete lines the log holds now. */
  static int lines(Path file) {
    try {
      if (!Files.exists(file)) {
        return 0;
      }
      byte[] bytes = Files.readAllBytes(file);
      int n = 0;
      for (byte b : bytes) {
        if (b == '\n') {
          n++;
        }
      }
      return n;
    } catch (IOException e) {
      throw new UncheckedIOException("Could not read worker log " + file, e);
    }
  }

  /** Reads the first {@code maxLines} lines of the log of {@code worker}. */
  static Entries read(int worker, Path file, int maxLines) {
    List<Acquisition> acquisitions = new ArrayList<>();
    List<Ack> acks = new ArrayList<>();
    List<Refusal> refusals = new ArrayList<>();
    Map<String, Integer> errors = new TreeMap<>();
    List<String> lines;
    try {
      lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException("Could not read worker log " + file, e);
    }
    for (String line : lines.subList(0, Math.min(maxLines, lines.size()))) {
      String[] f = line.split(" ");
      try {
        switch (f[0]) {
          case "T" -> acquisitions.add(new Acquisition(worker, f[1], Long.parseLong(f[2])));
          case "A" ->
              acks.add(
                  new Ack(
                      worker,
                      f[1],
                      Long.parseLong(f[2]),
                      Long.parseLong(f[3]),
                      Long.parseLong(f[4])));
          case "R" ->
              refusals.add(
                  new Refusal(worker, f[1], Long.parseLong(f[2]), Long.parseLong(f[3]), f[4]));
          case "E" -> errors.merge(f[2], 1, Integer::sum);
          default -> {
            // a torn line
          }
        }
      } catch (RuntimeException e) {
        // a torn line: the worker died while writing it, so it saw nothing it could act on
      }
    }
    return new Entries(acquisitions, acks, refusals, errors);
  }
}
