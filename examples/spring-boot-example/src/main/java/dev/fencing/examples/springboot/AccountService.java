package dev.fencing.examples.springboot;

import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.WithLease.WhenHeld;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Deposits: one instance at a time per account, under the lease on {@code account:<number>}. */
@Service
public class AccountService {
  private final AccountRepository accounts;

  public AccountService(AccountRepository accounts) {
    this.accounts = accounts;
  }

  /** Adds {@code amount} to the account, opening it if need be; returns the new balance. */
  @WithLease(value = "account:#{#number}", whenHeld = WhenHeld.WAIT, maxWait = "10s")
  @Transactional
  public long deposit(String number, long amount) {
    Account account = accounts.findByNumber(number).orElseGet(() -> new Account(number));
    account.deposit(amount);
    return accounts.save(account).balance();
  }
}
