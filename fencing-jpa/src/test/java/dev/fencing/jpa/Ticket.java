package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** One resource per row ({@code ticket:<id>}), versioned: a lock can force its version up. */
@Entity
@Table(name = "ticket")
@Fenced(prefix = "ticket:", attribute = "id")
public class Ticket {
  @Id String id = "";

  long seats;

  @Version long version;

  protected Ticket() {}

  Ticket(String id, long seats) {
    this.id = id;
    this.seats = seats;
  }
}
