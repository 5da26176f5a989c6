package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** One resource for every row; SEQUENCE ids (so inserts wait for the flush and can batch). */
@Entity
@Table(name = "ledger_entry")
@Fenced("ledger")
public class LedgerEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  String text = "";
  long amount;

  protected LedgerEntry() {}

  LedgerEntry(String text, long amount) {
    this.text = text;
    this.amount = amount;
  }
}
