package dev.fencing.spring.boot.autoconfigure.app;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.WithLease.WhenHeld;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/** Plain-JDBC service methods under {@code @WithLease}. */
public class LedgerService {
  private final JdbcTemplate jdbc;
  private final AtomicInteger runs = new AtomicInteger();

  public LedgerService(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  /** Writes one row under the lease on {@code ledger}; returns the token it wrote with. */
  @WithLease("ledger")
  @Transactional
  public FencingToken post(String text) {
    jdbc.update("INSERT INTO jdbc_entry (text) VALUES (?)", text);
    return Fencing.current().token("ledger").orElseThrow();
  }

  /** Whatever {@code inside} returns, computed under the lease on {@code ledger}. */
  @WithLease("ledger")
  public <T> T underLease(Supplier<T> inside) {
    runs.incrementAndGet();
    return inside.get();
  }

  /** Skips when the lease is held elsewhere. */
  @WithLease(value = "ledger", whenHeld = WhenHeld.SKIP)
  public Optional<FencingToken> postIfFree(String text) {
    runs.incrementAndGet();
    jdbc.update("INSERT INTO jdbc_entry (text) VALUES (?)", text);
    return Fencing.current().token("ledger");
  }

  /** Waits for the lease up to 30 s. */
  @WithLease(value = "ledger", whenHeld = WhenHeld.WAIT, maxWait = "30s")
  @Transactional
  public FencingToken postWhenFree(String text) {
    return post(text); // re-entrant: same lease
  }

  /** Waits for the lease at most 100 ms. */
  @WithLease(value = "ledger", whenHeld = WhenHeld.WAIT, maxWait = "100ms")
  public void postWaitingBriefly(String text) {
    runs.incrementAndGet();
  }

  /** One resource per account, from the argument. */
  @WithLease(value = "account:#{#number}", ttl = "${test.account.ttl:20s}")
  public FencingToken touchAccount(String number) {
    return Fencing.current().token("account:" + number).orElseThrow();
  }

  public int runs() {
    return runs.get();
  }
}
