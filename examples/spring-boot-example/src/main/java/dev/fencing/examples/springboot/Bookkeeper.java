package dev.fencing.examples.springboot;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Writes ledger lines, each in a transaction of its own. */
@Service
public class Bookkeeper {
  private final LedgerEntryRepository entries;

  public Bookkeeper(LedgerEntryRepository entries) {
    this.entries = entries;
  }

  @Transactional
  public void record(String text, long amount, String writtenBy) {
    entries.save(new LedgerEntry(text, amount, writtenBy));
  }

  @Transactional(readOnly = true)
  public long total() {
    return entries.total();
  }
}
