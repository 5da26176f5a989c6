package dev.fencing.jdbc;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What {@link LeaseClient} and its {@link LeaseClient.Builder} accept, and what they default to:
 * each check throws {@link IllegalArgumentException} naming the field, before anything is sent.
 */
final class LeaseSettings {
  static final Duration MIN_TTL = Duration.ofMillis(1);
  static final Duration MAX_TTL = Duration.ofDays(7);
  static final Duration MIN_HANDOVER_TIMEOUT = Duration.ofMillis(1);
  static final Duration MAX_HANDOVER_TIMEOUT = Duration.ofHours(1);
  static final double MIN_RENEW_FRACTION = 0.001;
  static final double MAX_RENEW_FRACTION = 0.5;
  private static final int MAX_HOLDER_LENGTH = 200;
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private static final int KEEP_ALIVE_THREADS = 2;
  private static final AtomicInteger THREAD_NUMBER = new AtomicInteger();

  private LeaseSettings() {}

  static void checkTtl(Duration ttl) {
    checkRange("ttl", ttl, MIN_TTL, MAX_TTL, "1 ms and 7 days");
  }

  static void checkHandoverTimeout(Duration handoverTimeout) {
    checkRange(
        "handoverTimeout",
        handoverTimeout,
        MIN_HANDOVER_TIMEOUT,
        MAX_HANDOVER_TIMEOUT,
        "1 ms and 1 h");
  }

  /**
   * The database's rule ({@code try_acquire}: 1 to 200 characters, none matching {@code
   * [[:cntrl:]]}), counted in characters (code points, as PostgreSQL counts), not UTF-16 units.
   * Control characters are C0, DEL and C1 (PostgreSQL's UTF-8 locales count C1 too), and the line
   * and paragraph separators (U+2028, U+2029: controls in glibc's UTF-8 locales); an unpaired
   * surrogate is no character at all (the driver would send '?').
   */
  static void checkHolder(String holder) {
    int length = holder.codePointCount(0, holder.length());
    if (length == 0
        || length > MAX_HOLDER_LENGTH
        || !holder.codePoints().allMatch(LeaseSettings::isHolderCharacter)) {
      throw new IllegalArgumentException(
          "holder must be 1 to 200 characters without control characters, was '" + holder + "'");
    }
  }

  private static boolean isHolderCharacter(int codePoint) {
    return !Character.isISOControl(codePoint)
        && codePoint != 0x2028
        && codePoint != 0x2029
        && Character.getType(codePoint) != Character.SURROGATE;
  }

  static void checkSchema(String schema) {
    if (!IDENTIFIER.matcher(schema).matches()) {
      throw new IllegalArgumentException(
          "schema must be a lower-case SQL identifier of at most 63 characters"
              + " ([a-z_][a-z0-9_]*), was '"
              + schema
              + "'");
    }
  }

  /**
   * 1/1000 to 1/2 (B138). Above 1/2 the first renewal may come after the client reckons the lease
   * expired (its reckoning starts before the acquisition's round trip), so the lease is lost
   * without a renewal tried; below 1/1000 a long lease is renewed every few hundred microseconds.
   */
  static void checkRenewFraction(double renewFraction) {
    if (!(renewFraction >= MIN_RENEW_FRACTION && renewFraction <= MAX_RENEW_FRACTION)) {
      throw new IllegalArgumentException(
          "renewFraction must be between 0.001 and 0.5, was "
              + renewFraction
              + " (above 1/2 the first renewal may come after the lease's reckoned expiry;"
              + " below 1/1000 it renews more than 1000 times a ttl)");
    }
  }

  private static void checkRange(
      String field, @Nullable Duration value, Duration min, Duration max, String range) {
    Objects.requireNonNull(value, field);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(field + " must be between " + range + ", was " + value);
    }
  }

  /** {@code hostname/pid/random}: who holds the leases when the builder is not told. */
  static String defaultHolder() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "unknown-host";
    }
    if (host.length() > 150) {
      host = host.substring(0, 150); // leaves room for pid and suffix within 200
    }
    return host
        + "/"
        + ProcessHandle.current().pid()
        + "/"
        + String.format(Locale.ROOT, "%06x", ThreadLocalRandom.current().nextInt(1 << 24));
  }

  /** The keep-alive's daemon threads, shared by the leases of one client. */
  static ScheduledExecutorService newKeepAliveScheduler() {
    ThreadFactory threads =
        task -> {
          Thread t = new Thread(task, "fencing-keepalive-" + THREAD_NUMBER.incrementAndGet());
          t.setDaemon(true); // renewing must never keep the JVM alive
          return t;
        };
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(KEEP_ALIVE_THREADS, threads);
    scheduler.setRemoveOnCancelPolicy(true);
    return scheduler;
  }
}
