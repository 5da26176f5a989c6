package dev.fencing.examples.jpa;

import dev.fencing.jpa.Fenced;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A ledger entry. {@code @Fenced("ledger")}: every write needs a token of resource "ledger". */
@Entity
@Table(name = "ledger_entry")
@Fenced("ledger")
public class LedgerEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY) // bigserial: the login has USAGE on it
  private Long id;

  private String text;
  private long amount;

  protected LedgerEntry() {}

  /** A new entry. */
  public LedgerEntry(String text, long amount) {
    this.text = text;
    this.amount = amount;
  }

  /** What the entry says. */
  public String text() {
    return text;
  }
}
