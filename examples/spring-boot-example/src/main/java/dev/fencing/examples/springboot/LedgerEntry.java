package dev.fencing.examples.springboot;

import dev.fencing.jpa.Fenced;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;

/** A ledger line. Only the holder of the lease on {@code ledger} may write it. */
@Entity
@Fenced("ledger")
public class LedgerEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  private String text;
  private long amount;

  @Column(name = "written_by")
  private String writtenBy;

  protected LedgerEntry() {}

  public LedgerEntry(String text, long amount, String writtenBy) {
    this.text = text;
    this.amount = amount;
    this.writtenBy = writtenBy;
  }

  public String text() {
    return text;
  }

  public long amount() {
    return amount;
  }

  public String writtenBy() {
    return writtenBy;
  }
}
