package dev.fencing.spring.boot.autoconfigure.app;

import org.springframework.data.jpa.repository.JpaRepository;

public interface LedgerEntryRepository extends JpaRepository<LedgerEntry, Long> {
  long countByText(String text);
}
