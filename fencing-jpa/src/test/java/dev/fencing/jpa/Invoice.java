package dev.fencing.jpa;

import jakarta.persistence.CascadeType;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.OneToMany;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** An aggregate: its lines are persisted, removed and orphan-removed with it. */
@Entity
@Table(name = "invoice")
@Fenced("billing")
public class Invoice {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  String customer = "";

  @OneToMany(mappedBy = "invoice", cascade = CascadeType.ALL, orphanRemoval = true)
  List<InvoiceLine> lines = new ArrayList<>();

  protected Invoice() {}

  Invoice(String customer, String... items) {
    this.customer = customer;
    for (String item : items) {
      add(item);
    }
  }

  void add(String item) {
    lines.add(new InvoiceLine(this, item));
  }
}
