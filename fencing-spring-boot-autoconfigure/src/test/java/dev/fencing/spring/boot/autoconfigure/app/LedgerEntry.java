package dev.fencing.spring.boot.autoconfigure.app;

import dev.fencing.jpa.Fenced;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;

/** A fenced entity: every write needs the token of {@code ledger}. */
@Entity
@Fenced("ledger")
public class LedgerEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  private String text;
  private long amount;

  protected LedgerEntry() {}

  public LedgerEntry(String text, long amount) {
    this.text = text;
    this.amount = amount;
  }

  public Long id() {
    return id;
  }

  /** Changes the amount; Hibernate writes it at the next flush (at the latest at the commit). */
  public void add(long delta) {
    amount += delta;
  }

  public String text() {
    return text;
  }

  public long amount() {
    return amount;
  }
}
