package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** A line of an {@link Invoice}, fenced with it (fencing does not follow associations). */
@Entity
@Table(name = "invoice_line")
@Fenced("billing")
public class InvoiceLine {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  @ManyToOne @Nullable Invoice invoice;

  String item = "";

  protected InvoiceLine() {}

  InvoiceLine(Invoice invoice, String item) {
    this.invoice = invoice;
    this.item = item;
  }
}
