from django.urls import path

from . import views

BASE = "numbers/network-apis/"

urlpatterns = [
    path(BASE + "status", views.StatusView.as_view(), name="network-apis-status"),
    path(BASE + "carrier-billing:charge", views.ChargeView.as_view(),
         name="network-apis-carrier-billing-charge"),
    *[path(BASE + operation, views.check_view(operation).as_view(),
           name="network-apis-" + operation.replace(":", "-"))
      for operation in views.OPERATIONS],
]
